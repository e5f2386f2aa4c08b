package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kernel = "6.1.0-test"

func write(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hostsFile(t testing.TB, dir string, hosts ...string) string {
	return write(t, dir, "hosts", "[fanout]\n"+strings.Join(hosts, "\n")+"\n")
}

func agentStep(host string, step int, status, output string) string {
	return `{"event":"step","host":"` + host + `","step":` + string(rune('0'+step)) +
		`,"status":"` + status + `","output":` + quote(output) + "}\n"
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(s, "\n", `\n`) + `"`
}

func agentHost(host string) string {
	return agentStep(host, 1, "ok", kernel+"\n") +
		agentStep(host, 2, "ok", "Filesystem Size\n/dev/x 1G\n") +
		agentStep(host, 3, "ok", host+"\n") +
		`{"event":"done","host":"` + host + `","status":"success"}` + "\n"
}

func TestAgent(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	good := write(t, dir, "good", `{"event":"plan"}`+"\n"+agentHost("h2")+agentHost("h1"))
	if err := run([]string{"agent", "-hosts", hosts, "-kernel", kernel, good}); err != nil {
		t.Fatalf("good output: %v", err)
	}
	for name, out := range map[string]string{
		"missing host":   agentHost("h1"),
		"failed step":    agentHost("h1") + agentStep("h2", 1, "ok", kernel+"\n") + agentStep("h2", 2, "error", "") + agentStep("h2", 3, "ok", "h2\n"),
		"wrong kernel":   agentHost("h1") + strings.Replace(agentHost("h2"), kernel, "5.0", 1),
		"wrong file":     agentHost("h1") + strings.Replace(agentHost("h2"), `"h2\n"`, `"h1\n"`, 1),
		"not done":       agentHost("h1") + strings.Replace(agentHost("h2"), "success", "failed", 1),
		"bad json":       agentHost("h1") + agentHost("h2") + "{\"event\":\n",
		"no such output": "",
	} {
		p := write(t, dir, "bad", out)
		if name == "no such output" {
			p = filepath.Join(dir, "absent")
		}
		if err := run([]string{"agent", "-hosts", hosts, "-kernel", kernel, p}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func agentLog(host, k string) string {
	return "fanout on " + host + ": 1 phase, 3 steps\n  [1] execute_command: uname -r\n      ok (exit 0, 2 ms)\n      │ " + k +
		"\n  [2] execute_command: df -h /\n      ok\n      │ Filesystem  Size\n      │ /dev/x 1G\n" +
		"  [3] execute_command: mkdir …\n      ok\n      │ " + host + "\n\nsuccess on " + host + ": 3 steps: 3 ok\nsession x\n"
}

func TestAgentLog(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	out := filepath.Join(dir, "out")
	write(t, out, "h1.log", agentLog("h1", kernel))
	write(t, out, "h2.log", agentLog("h2", kernel))
	if err := run([]string{"agent-log", "-hosts", hosts, "-kernel", kernel, out}); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"wrong kernel": agentLog("h2", "5.0"),
		"wrong host":   agentLog("h1", kernel),
		"failed":       strings.Replace(agentLog("h2", kernel), "success on", "failed on", 1),
		"truncated":    agentLog("h2", kernel)[:60],
	} {
		write(t, out, "h2.log", content)
		if err := run([]string{"agent-log", "-hosts", hosts, "-kernel", kernel, out}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	os.Remove(filepath.Join(out, "h2.log"))
	if err := run([]string{"agent-log", "-hosts", hosts, "-kernel", kernel, out}); err == nil {
		t.Error("missing log: no error")
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	root := filepath.Join(dir, "root")
	write(t, root, "h1/f", "h1\n")
	write(t, root, "h2/f", "h2\n")
	if err := run([]string{"files", "-hosts", hosts, "-root", root}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "h2/f", "h1\n")
	if err := run([]string{"files", "-hosts", hosts, "-root", root}); err == nil || !strings.Contains(err.Error(), `h2: file holds "h1\n"`) {
		t.Errorf("wrong content: %v", err)
	}
	write(t, root, "h2/f", "h2\n")
	write(t, root, "h3/f", "h3\n")
	if err := run([]string{"files", "-hosts", hosts, "-root", root}); err == nil || !strings.Contains(err.Error(), "h3: unexpected") {
		t.Errorf("extra host: %v", err)
	}
}

func TestPSSH(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	out := filepath.Join(dir, "o")
	write(t, out, "h1", kernel+"\nFilesystem Size\n/dev/x 1G\nh1\n")
	write(t, out, "h2", kernel+"\nFilesystem Size\n/dev/x 1G\nh2\n")
	if err := run([]string{"pssh", "-hosts", hosts, "-kernel", kernel, out}); err != nil {
		t.Fatal(err)
	}
	write(t, out, "h2", kernel+"\n")
	if err := run([]string{"pssh", "-hosts", hosts, "-kernel", kernel, out}); err == nil {
		t.Error("truncated output: no error")
	}
	var dirs []string
	for i, content := range []string{kernel + "\n", "Filesystem\n", ""} {
		d := filepath.Join(dir, "o3", string(rune('1'+i)))
		for _, h := range []string{"h1", "h2"} {
			c := content
			if c == "" {
				c = h + "\n"
			}
			write(t, d, h, c)
		}
		dirs = append(dirs, d)
	}
	if err := run(append([]string{"pssh3", "-hosts", hosts, "-kernel", kernel}, dirs...)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dirs[1], "h1"))
	if err := run(append([]string{"pssh3", "-hosts", hosts, "-kernel", kernel}, dirs...)); err == nil {
		t.Error("missing output: no error")
	}
}

const recap = `PLAY [all] ****

TASK [kernel release] ****
changed: [h1]

PLAY RECAP *********************************************************************
h1                         : ok=3    changed=3    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0
h2                         : ok=%s    changed=3    unreachable=0    failed=%s    skipped=0    rescued=0    ignored=0
`

func TestRecap(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	ok := write(t, dir, "ok", strings.Replace(strings.Replace(recap, "%s", "3", 1), "%s", "0", 1))
	if err := run([]string{"ansible", "-hosts", hosts, "-ok", "3", ok}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"ansible", "-hosts", hosts, "-ok", "4", ok}); err == nil {
		t.Error("ok=3 passed for -ok 4")
	}
	failed := write(t, dir, "failed", strings.Replace(strings.Replace(recap, "%s", "2", 1), "%s", "1", 1))
	if err := run([]string{"ansible", "-hosts", hosts, "-ok", "3", failed}); err == nil {
		t.Error("failed host passed")
	}
	norecap := write(t, dir, "norecap", "ERROR! the playbook could not be found\n")
	if err := run([]string{"ansible", "-hosts", hosts, norecap}); err == nil || !strings.Contains(err.Error(), "no PLAY RECAP") {
		t.Errorf("no recap: %v", err)
	}
}

func TestAnsibleJSON(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1")
	doc := `[WARNING]: something
{"plays":[{"tasks":[
 {"hosts":{"h1":{"stdout":"` + kernel + `"}}},
 {"hosts":{"h1":{"stdout":"Filesystem Size\n/dev/x"}}},
 {"hosts":{"h1":{"stdout":"h1"}}}]}]}`
	p := write(t, dir, "out", doc)
	if err := run([]string{"ansible-json", "-hosts", hosts, "-kernel", kernel, p}); err != nil {
		t.Fatal(err)
	}
	p = write(t, dir, "failed", strings.Replace(doc, `"stdout":"h1"`, `"stdout":"","failed":true`, 1))
	if err := run([]string{"ansible-json", "-hosts", hosts, "-kernel", kernel, p}); err == nil {
		t.Error("failed task passed")
	}
	p = write(t, dir, "trunc", doc[:len(doc)-5])
	if err := run([]string{"ansible-json", "-hosts", hosts, "-kernel", kernel, p}); err == nil {
		t.Error("truncated JSON passed")
	}
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1")
	for _, args := range [][]string{
		nil,
		{"nope", "-hosts", hosts},
		{"files", "-hosts", hosts},
		{"files", "-hosts", filepath.Join(dir, "absent"), "-root", dir},
		{"pssh3", "-hosts", hosts, "-kernel", kernel, dir},
		{"agent", "-hosts", hosts, filepath.Join(dir, "x")},
		{"files", "-hosts", write(t, dir, "empty", "# nothing\n[g]\n"), "-root", dir},
	} {
		if err := run(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// FuzzOutputs feeds arbitrary tool outputs to every parser: errors are
// fine, panics are not.
func FuzzOutputs(f *testing.F) {
	f.Add(agentHost("h1"))
	f.Add(strings.Replace(strings.Replace(recap, "%s", "3", 1), "%s", "0", 1))
	f.Add(`{"plays":[{"tasks":[{"hosts":{"h1":{"stdout":"x"}}}]}]}`)
	f.Add(kernel + "\nFilesystem\nh1\n")
	f.Add(agentLog("h1", kernel))
	hosts := []string{"h1", "h2"}
	f.Fuzz(func(t *testing.T, out string) {
		b := []byte(out)
		agentEvents(hosts, kernel, strings.NewReader(out)) //nolint:errcheck // only panics matter
		recapCheck(hosts, 3, b)                            //nolint:errcheck
		ansibleJSON(hosts, kernel, b)                      //nolint:errcheck
		psshJoined("h1", kernel, b)
		agentLogCheck("h1", kernel, b)
	})
}

// The undo journal's notes after a command's output are not its output; any
// other text after the host name is.
func TestStripJournalNotes(t *testing.T) {
	for in, want := range map[string]string{
		"h1\n": "h1\n",
		"h1\n\n[warning: undo journal: /r/h1: read /r/h1: is a directory; undo will not notice later changes to it]": "h1\n",
		"h1\n\n[warning: undo journal: /a: x]\n[warning: undo journal: /b: y]":                                       "h1\n",
		"h1\n[warning: undo journal: /a: x]\nmore":                                                                   "h1\n[warning: undo journal: /a: x]\nmore",
		"h1\n\n[warning: something else]":                                                                            "h1\n\n[warning: something else]",
		"[warning: undo journal: x]":                                                                                 "[warning: undo journal: x]",
	} {
		if got := stripJournalNotes(in); got != want {
			t.Errorf("stripJournalNotes(%q) = %q, want %q", in, got, want)
		}
	}
	if outputs("h1", kernel, kernel+"\n", "Filesystem x\n", "h2\n\n[warning: undo journal: /a: x]") == "" {
		t.Error("a wrong host before a journal note passed")
	}
}

// same: agent's three outputs per host equal parallel-ssh's, df compared
// by its header, device and mount point.
func TestSame(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	out := filepath.Join(dir, "o")
	for _, h := range []string{"h1", "h2"} {
		write(t, out, h, kernel+"\nFilesystem  Size\n/dev/x 1G\nh"+h[1:]+"\n")
	}
	a := "Filesystem      Size  Used Avail Use% Mounted on\n/dev/vda1        50G   20G   28G  42% /\n"
	b := "Filesystem      Size  Used Avail Use% Mounted on\n/dev/vda1        50G   21G   27G  44% /\n"
	if dfShape(a) != dfShape(b) || dfShape(a) == dfShape(strings.Replace(b, "% /", "% /srv", 1)) {
		t.Errorf("df shapes: %q %q", dfShape(a), dfShape(b))
	}
	good := write(t, dir, "good", agentHost("h1")+agentHost("h2"))
	if err := run([]string{"same", "-hosts", hosts, good, out}); err != nil {
		t.Fatalf("same results: %v", err)
	}
	noted := strings.Replace(agentHost("h2"), `"h2\n"`, `"h2\n\n[warning: undo journal: a note]\n"`, 1)
	if err := run([]string{"same", "-hosts", hosts, write(t, dir, "noted", agentHost("h1")+noted), out}); err != nil {
		t.Errorf("a journal note after the output: %v", err)
	}
	for name, agent := range map[string]string{
		"missing host": agentHost("h1"),
		"other kernel": agentHost("h1") + strings.Replace(agentHost("h2"), kernel, "5.0", 1),
		"other file":   agentHost("h1") + strings.Replace(agentHost("h2"), `"h2\n"`, `"h2 \n"`, 1),
		"other mount":  agentHost("h1") + strings.Replace(agentHost("h2"), `/dev/x 1G`, `/dev/y 1G`, 1),
		"failed step":  agentHost("h1") + strings.Replace(agentHost("h2"), `"step":2,"status":"ok"`, `"step":2,"status":"error"`, 1),
		"not done":     agentHost("h1") + strings.Replace(agentHost("h2"), "success", "failed", 1),
	} {
		if err := run([]string{"same", "-hosts", hosts, write(t, dir, "bad", agent), out}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	write(t, out, "h2", kernel+"\n")
	if err := run([]string{"same", "-hosts", hosts, good, out}); err == nil {
		t.Error("parallel-ssh's output cut: no error")
	}
	if err := run([]string{"same", "-hosts", hosts, good}); err == nil {
		t.Error("one argument: no error")
	}
}

func FuzzSame(f *testing.F) {
	f.Add(agentHost("h1"), kernel+"\nFilesystem\n/dev/x 1G /\nh1\n")
	f.Fuzz(func(t *testing.T, agent, pssh string) {
		outs, err := agentOutputs(strings.NewReader(agent))
		p, ok := splitJoined(pssh)
		if err == nil && ok {
			sameResults(outs["h1"], p)
		}
		dfShape(pssh)
	})
}
