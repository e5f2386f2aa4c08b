package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestDemoModelScriptParses(t *testing.T) {
	replies, err := parseModelScript(demoModel)
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) < 4 || len(replies[0].ToolCalls) != 1 || replies[0].ToolCalls[0].Name != "submit_plan" {
		t.Fatalf("demo script %+v", replies)
	}
}

func TestParseModelScriptErrors(t *testing.T) {
	for in, want := range map[string]string{
		``:     "model script: unexpected end of JSON input",
		`{}`:   "model script: json: cannot unmarshal object",
		`[]`:   "model script: no replies",
		`[{}]`: "reply 1 is empty",
		`[{"content":"x"},{"tool_calls":[{"name":"","arguments":{}}]}]`: "reply 2: a tool call needs a name and an arguments object",
		`[{"tool_calls":[{"name":"read_file","arguments":"{}"}]}]`:      "reply 1: a tool call needs a name and an arguments object",
		`[{"tool_calls":[{"name":"read_file"}]}]`:                       "reply 1: a tool call needs a name",
	} {
		if _, err := parseModelScript([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", in, err, want)
		}
	}
}

func FuzzParseModelScript(f *testing.F) {
	f.Add(demoModel)
	f.Add([]byte(`[{"content":"x","tool_calls":[{"name":"a","arguments":{"b":1}}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		replies, err := parseModelScript(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model script: ") {
				t.Fatalf("unclear error %q", err)
			}
			return
		}
		for _, r := range replies {
			if r.Content == "" && len(r.ToolCalls) == 0 {
				t.Fatal("empty reply accepted")
			}
		}
	})
}

// TestDemo runs `make demo`'s script end to end with freshly built agent and
// testhost binaries, without a terminal: the task through the scripted
// model, the script printing 2, undo.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agent")
	}
	bin := buildBins(t)
	cmd := exec.Command(filepath.Join(bin, "testhost"), "--", "bash", "demo.sh")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"The model is SCRIPTED",
		`$ agent --ssh-host vub -c "执行用户目录下的test目录下 a.sh,如果输出为1那修改脚本让它输出为2" --approve medium`,
		"Phase 1: 执行脚本并获取输出", "Phase 2: 条件判断和文件修改", "Phase 3: 验证修改",
		"success on vub: 6 steps: 6 ok",
		"$ agent --ssh-host vub exec -- \"sh ~/test/a.sh\"\n2\n",
		"undid session", "✓ The task ran", "DEEPSEEK_API_KEY",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// A model script that makes the task fail fails the demo.
func TestDemoFailsWhenTheScriptIsNotFixed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agent")
	}
	bin := buildBins(t)
	script := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(script, []byte(`[{"tool_calls":[{"name":"submit_plan","arguments":{"phases":[{"phase":1,"goal":"look"}]}}]},{"content":"nothing to do"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "testhost"), "-model-script", script, "--", "bash", "demo.sh")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "demo: FAILED — the script prints '1', want 2") {
		t.Fatalf("demo did not fail: %v\n%s", err, out)
	}
}

// buildBins builds agent and testhost into a temporary directory.
func buildBins(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for pkg, name := range map[string]string{"../../../cmd/agent": "agent", ".": "testhost"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	return bin
}

// examples/demo-saved.yaml is what `--save-plan` writes for the demo task:
// the same command with the same scripted model writes it byte for byte,
// and `agent run` replays it on a fresh host (a new testhost) with the same
// end state.
func TestDemoSavedPlanExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agent")
	}
	bin := buildBins(t)
	example, err := filepath.Abs("../../../examples/demo-saved.yaml")
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "saved.yaml")
	testhost := func(script string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "testhost"), "--", "sh", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "SAVED="+saved, "EXAMPLE="+example)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	testhost(`agent --ssh-host vub -c "执行用户目录下的test目录下 a.sh,如果输出为1那修改脚本让它输出为2" --approve medium --save-plan "$SAVED"`)
	got, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("--save-plan wrote:\n%s\nexamples/demo-saved.yaml holds:\n%s", got, want)
	}
	out := testhost(`agent run "$EXAMPLE" --ssh-host vub --approve medium && echo "prints: $(agent --ssh-host vub exec -- 'sh ~/test/a.sh')"`)
	if !strings.Contains(out, "success on vub: 6 steps: 6 ok") || !strings.Contains(out, "prints: 2\n") {
		t.Errorf("replay on a fresh host:\n%s", out)
	}
}

// The command testhost runs gets SIGINT and SIGTERM with their default
// action: testhost catches them for itself, but does not ignore them, which
// the child would inherit (agent's Ctrl-C handling would never fire).
func TestChildSignalsNotIgnored(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "testhost"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build testhost: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "testhost"), "--", "sh", "-c", "grep '^SigIgn:' /proc/self/status").CombinedOutput()
	if err != nil {
		t.Fatalf("testhost: %v\n%s", err, out)
	}
	_, hex, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	ign, perr := strconv.ParseUint(hex, 16, 64)
	if !ok || perr != nil {
		t.Fatalf("SigIgn line %q: %v", out, perr)
	}
	for _, sig := range []uint{2, 15} { // SIGINT, SIGTERM
		if ign&(1<<(sig-1)) != 0 {
			t.Errorf("the child ignores signal %d (SigIgn %s)", sig, hex)
		}
	}
}
