package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// The golden tests pin the --json event stream of one single-host task
// run and of one --plan-once batch run, byte for byte once the volatile
// fields are normalised (goldenNormalise): which events come, in which
// order, with which fields, in which field order, empty values included.
// After a change to the engine or the renderers, the stream must be the
// same; a change meant to alter it regenerates the goldens with
//
//	go test ./cmd/agent -run TestGoldenJSON -update
//
// and the diff of testdata/golden/*.jsonl is the change to review.

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.jsonl from the current output")

// goldenReply is a scripted reply with fixed token counts, so the llm and
// batch events' counts do not depend on the request's size (the prompt
// holds the machine's environment).
func goldenReply(r testenv.Reply, prompt, completion int) testenv.Reply {
	r.PromptTokens, r.CompletionTokens = prompt, completion
	return r
}

// goldenEnv gives the run a home of its own (the local host's, with
// HOME) and state and config directories in it, no terminal, and a
// scripted model with replies. It returns the home.
func goldenEnv(t *testing.T, replies ...testenv.Reply) (home string, srv *testenv.LLMServer) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	srv = startBatchLLM(t, replies...)
	return home, srv
}

// runAgent runs agent in-process with no stdin.
func runAgent(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

var (
	goldenDuration = regexp.MustCompile(`"duration_ms":[0-9]+`)
	goldenSession  = regexp.MustCompile(`"session":"[0-9TZ]+-[0-9a-f]+"`)
	goldenSessionX = regexp.MustCompile(`[0-9]{8}T[0-9]{6}Z-[0-9a-f]+`)
)

// goldenNormalise replaces what changes from run to run in a --json
// stream, and nothing else: durations become 0, session ids SESSION, and
// each of paths (longest first, as written in JSON) its placeholder.
func goldenNormalise(out string, paths map[string]string) string {
	out = goldenDuration.ReplaceAllString(out, `"duration_ms":0`)
	out = goldenSession.ReplaceAllString(out, `"session":"SESSION"`)
	out = goldenSessionX.ReplaceAllString(out, `SESSION`)
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	// longest first, so a path inside another is replaced after it
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, p := range keys {
		out = strings.ReplaceAll(out, p, paths[p])
	}
	return out
}

// checkGolden compares got with testdata/golden/name line by line, or
// rewrites the file with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	want := string(b)
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	var d strings.Builder
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g == w {
			continue
		}
		fmt.Fprintf(&d, "line %d:\n  want: %s\n  got:  %s\n", i+1, w, g)
		if i < len(gl) && i < len(wl) {
			fmt.Fprintf(&d, "  first difference at byte %d\n", firstDiff(g, w))
		}
	}
	t.Errorf("--json stream differs from %s (%d lines, want %d; -update rewrites it):\n%s\nfull output:\n%s",
		path, len(gl), len(wl), d.String(), got)
}

func firstDiff(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestGoldenJSONTask pins `agent -c TASK --json` on the local host in
// adaptive mode: a plan of 2 phases; in phase 1 a thought and a safe
// command saving a variable, then the text closing the phase; in phase 2
// a step whose condition is false (skipped), a write_file (medium, run
// with --approve medium, with a diff) and sudo (high, denied without a
// terminal), then the closing text; the llm usage and done (failed: a
// step was denied, exit 4).
func TestGoldenJSONTask(t *testing.T) {
	replies := []testenv.Reply{
		goldenReply(testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "file_edit", "complexity": "simple",
			"phases": []map[string]any{
				{"phase": 1, "goal": "read the greeting", "success_criteria": "its text is known"},
				{"phase": 2, "goal": "make the greeting say world", "success_criteria": "greeting.txt says hello, world"},
			}}))), 101, 11),
		goldenReply(testenv.Reply{Content: "First I read the greeting file.", ToolCalls: []testenv.ToolCall{
			testenv.Call("execute_command", args(map[string]any{"command": "cat ~/greeting.txt", "save_output_as": "greeting",
				"description": "read the greeting"})),
		}}, 202, 22),
		goldenReply(testenv.Text("The greeting says hello."), 303, 33),
		goldenReply(testenv.Calls(
			testenv.Call("execute_command", args(map[string]any{"command": "echo already done", "condition": "greeting.strip() == 'hello, world'"})),
			testenv.Call("write_file", args(map[string]any{"file_path": "~/greeting.txt", "content": "hello, world\n",
				"description": "write the new greeting"})),
			testenv.Call("execute_command", args(map[string]any{"command": "sudo true"})),
		), 404, 44),
		goldenReply(testenv.Text("The greeting says hello, world; sudo was denied."), 505, 55),
	}
	home, srv := goldenEnv(t, replies...)
	if err := os.WriteFile(filepath.Join(home, "greeting.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAgent("-c", "make ~/greeting.txt say hello, world", "--json", "--approve", "medium")
	if code != exitDenied {
		t.Errorf("exit %d, want %d\nstderr:\n%s", code, exitDenied, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted replies not used", n)
	}
	if b, err := os.ReadFile(filepath.Join(home, "greeting.txt")); err != nil || string(b) != "hello, world\n" {
		t.Errorf("greeting.txt: %q (%v)", b, err)
	}
	checkGolden(t, "task.jsonl", goldenNormalise(out, map[string]string{home: "$HOME"}))
}

// TestGoldenJSONBatch pins `agent -i INVENTORY -c TASK --plan-once --json
// --forks 1` on 3 hosts with ansible_connection=local: the task with the
// model on web1 (plan, phases, a thought, a write_file with a diff, a
// command saving a variable, a conditional command, the texts closing the
// phases, its llm usage, done), then its steps replayed on web2 (the same
// path) and db1 (the conditional step skipped there, the replay goes on),
// each with a replay event, and the batch event last.
func TestGoldenJSONBatch(t *testing.T) {
	file := "{{dir}}/{{inventory_hostname}}.txt"
	replies := []testenv.Reply{
		goldenReply(testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "file_edit", "complexity": "simple",
			"phases": []map[string]any{
				{"phase": 1, "goal": "write the host's file", "success_criteria": "it greets"},
				{"phase": 2, "goal": "mark the web hosts"},
			}}))), 100, 10),
		goldenReply(testenv.Reply{Content: "Each host gets its own file from its variables.", ToolCalls: []testenv.ToolCall{
			testenv.Call("write_file", args(map[string]any{"file_path": file, "content": "{{greeting}} from {{inventory_hostname}} ({{role}})\n"})),
			testenv.Call("execute_command", args(map[string]any{"command": "cat " + file, "save_output_as": "written",
				"description": "read it back"})),
		}}, 200, 20),
		goldenReply(testenv.Text("The file is written."), 300, 30),
		goldenReply(testenv.Calls(
			testenv.Call("execute_command", args(map[string]any{"command": "echo web >> " + file,
				"condition": "'web' in group_names and written.startswith('hello')"})),
		), 400, 40),
		goldenReply(testenv.Text("Web hosts are marked."), 500, 50),
	}
	home, srv := goldenEnv(t, replies...)
	// dir is short and under ~: the safety policy's reasons shorten a
	// redirect's target past 60 bytes, which a long $TMPDIR would reach.
	dir := filepath.Join(home, "w")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(home, "hosts.ini")
	if err := os.WriteFile(inv, []byte(`[web]
web1 ansible_connection=local role=frontend
web2 ansible_connection=local role=frontend

[db]
db1 ansible_connection=local role=database

[all:vars]
greeting=hello
dir=~/w
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAgent("-i", inv, "-c", "write each host's greeting to its file; mark the web hosts",
		"--plan-once", "--json", "--forks", "1", "--approve", "medium")
	if code != 0 {
		t.Errorf("exit %d\nstderr:\n%s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted replies not used", n)
	}
	for name, want := range map[string]string{
		"web1": "hello from web1 (frontend)\nweb\n",
		"web2": "hello from web2 (frontend)\nweb\n",
		"db1":  "hello from db1 (database)\n",
	} {
		if b, err := os.ReadFile(filepath.Join(dir, name+".txt")); err != nil || string(b) != want {
			t.Errorf("%s.txt: %q (%v), want %q", name, b, err, want)
		}
	}
	checkGolden(t, "batch_plan_once.jsonl", goldenNormalise(out, map[string]string{home: "$HOME"}))
}
