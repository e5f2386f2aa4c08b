package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// startBatchLLM starts a scripted model for agent -c in these tests.
func startBatchLLM(t *testing.T, replies ...testenv.Reply) *testenv.LLMServer {
	t.Helper()
	srv := testenv.StartLLMServer(t, replies...)
	t.Cleanup(func() { srv.CheckNoRejections(t) })
	t.Setenv("AGENT_BASE_URL", srv.URL)
	t.Setenv("AGENT_MODEL", "gpt-4o-mini")
	t.Setenv("AGENT_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("DEEPSEEK_API_KEY", "")
	return srv
}

func args(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fixTask is the adaptive-execution spec's script fix, per inventory host:
// each host has its own script {{dir}}/{{inventory_hostname}}.sh.
const fixTask = "run {{dir}}/{{inventory_hostname}}.sh; if it prints 1, change it to print 2"

// fixScript is what the model answers for fixTask on one host: a plan of
// two phases, then the run, then the conditional edit and a check.
func fixScript() []testenv.Reply {
	script := "{{dir}}/{{inventory_hostname}}.sh"
	return []testenv.Reply{
		testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "file_edit", "complexity": "simple",
			"phases": []map[string]any{
				{"phase": 1, "goal": "run the script", "success_criteria": "its output is known"},
				{"phase": 2, "goal": "make it print 2 if it printed 1", "success_criteria": "it prints 2"},
			}}))),
		testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "sh " + script, "save_output_as": "script_output"}))),
		testenv.Text("The script printed its output."),
		testenv.Calls(
			testenv.Call("edit_file", args(map[string]any{"file_path": script, "search_pattern": "echo 1", "replacement": "echo 2",
				"condition": "script_output.strip() == '1'"})),
			testenv.Call("execute_command", args(map[string]any{"command": "sh " + script}))),
		testenv.Text("The script now prints 2."),
	}
}

// writeScripts gives each host its script: db hosts print 3, the others 1.
func (f *batchFixture) writeScripts(names []string) {
	f.t.Helper()
	for _, name := range names {
		n := "1"
		if strings.HasPrefix(name, "db") {
			n = "3"
		}
		if err := os.WriteFile(filepath.Join(f.dir, name+".sh"), []byte("#!/bin/sh\necho "+n+"\n"), 0o755); err != nil {
			f.t.Fatal(err)
		}
	}
}

// checkScripts checks that web hosts' scripts print 2 now and db hosts'
// still print 3.
func (f *batchFixture) checkScripts(names []string) {
	f.t.Helper()
	for _, name := range names {
		want := "#!/bin/sh\necho 2\n"
		if strings.HasPrefix(name, "db") {
			want = "#!/bin/sh\necho 3\n"
		}
		if b, err := os.ReadFile(filepath.Join(f.dir, name+".sh")); err != nil || string(b) != want {
			f.t.Errorf("%s.sh: %q (%v), want %q", name, b, err, want)
		}
	}
}

// TestBatchPlanOnce: the task on one host costs the model 5 calls; with
// --plan-once on 22 hosts it costs the same 5: the first host's steps are
// replayed on the others, the conditional edit skipped where the script
// prints 3.
func TestBatchPlanOnce(t *testing.T) {
	f := newBatchFixture(t)
	srv := startBatchLLM(t, fixScript()...)
	names := batchHostNames()
	inv := f.inventory("")

	f.writeScripts(names[:1])
	out, errOut, code := f.agent("-i", inv, "--limit", "web01", "--approve", f.approve, "-c", fixTask)
	if code != 0 {
		t.Fatalf("one host: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	one := len(srv.Requests())
	if one != 5 || !strings.Contains(out, "LLM: 5 calls") {
		t.Fatalf("one host: %d requests\n%s", one, out)
	}

	srv.Push(fixScript()...)
	f.writeScripts(names)
	out, errOut, code = f.agent("-i", inv, "--plan-once", "--forks", "10", "--approve", f.approve, "-c", fixTask)
	if code != 0 {
		t.Fatalf("plan-once: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()) - one; n != one {
		t.Errorf("plan-once on %d hosts: %d LLM requests, want %d (as for one host)", len(names), n, one)
	}
	if !strings.Contains(out, "22 hosts: 22 ok, 0 failed, 0 not run") || !strings.Contains(out, "LLM: 5 calls") {
		t.Errorf("summary:\n%s", out)
	}
	f.checkScripts(names)
	if row := tableRow(t, out, "web01"); !strings.Contains(row, "planned") {
		t.Errorf("web01: %q", row)
	}
	for _, name := range names[1:] {
		if row := tableRow(t, out, name); !strings.Contains(row, " ok ") || !strings.Contains(row, "replayed") {
			t.Errorf("%s: %q", name, row)
		}
	}
}

// TestBatchPlanOnceFallback: a host where a replayed step fails (its
// script is missing) asks the model itself; the others replay. With
// --json every event names its host, and the run ends with a batch event.
func TestBatchPlanOnceFallback(t *testing.T) {
	f := newBatchFixture(t)
	fallback := []testenv.Reply{
		testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "file_edit", "complexity": "simple",
			"phases": []map[string]any{{"phase": 1, "goal": "see why the script is missing"}}}))),
		testenv.Text("The script does not exist on this host; there is nothing to change."),
	}
	srv := startBatchLLM(t, append(fixScript(), fallback...)...)
	names := []string{"web01", "web02", "web03", "db01"}
	f.writeScripts([]string{"web01", "web03", "db01"})
	inv := f.inventory("")
	outDir := filepath.Join(t.TempDir(), "out")
	out, errOut, code := f.agent("-i", inv, "--limit", strings.Join(names, ":"), "--plan-once", "--json", "--out", outDir,
		"--approve", f.approve, "-c", fixTask)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 7 {
		t.Errorf("%d LLM requests, want 5 + 2 for the fallback", n)
	}
	var replays, dones int
	var batch map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		if ev["event"] == "batch" {
			batch = ev
			continue
		}
		host, _ := ev["host"].(string)
		if host == "" {
			t.Errorf("line %d has no host: %s", i+1, line)
		}
		switch ev["event"] {
		case "replay":
			replays++
			want := "followed"
			if host == "web02" {
				want = "diverged"
				if r, _ := ev["reason"].(string); !strings.Contains(r, "step 1 (execute_command): error here") {
					t.Errorf("reason: %q", r)
				}
			}
			if ev["status"] != want || ev["from"] != "web01" {
				t.Errorf("replay event: %s", line)
			}
		case "done":
			dones++
			if ev["status"] != "success" {
				t.Errorf("done: %s", line)
			}
		}
	}
	if replays != 3 || dones != 4 {
		t.Errorf("%d replay events (want 3), %d done events (want 4)", replays, dones)
	}
	if batch == nil || batch["ok"] != 4.0 || batch["llm_calls"] != 7.0 || batch["hosts"] != 4.0 {
		t.Errorf("batch event: %v", batch)
	}
	f.checkScripts([]string{"web01", "web03", "db01"})
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(outDir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		if name == "web02" && !strings.Contains(string(b), "left the plan of web01") {
			t.Errorf("web02.log:\n%s", b)
		}
		if !strings.Contains(string(b), "success on "+name) {
			t.Errorf("%s.log:\n%s", name, b)
		}
		// The model's messages: 5 calls for the first host, 2 for the
		// fallback, none for the replays.
		calls := map[string]int{"web01": 5, "web02": 2}[name]
		tr, err := os.ReadFile(filepath.Join(outDir, name+".transcript.jsonl"))
		if calls == 0 {
			if err == nil && len(tr) > 0 {
				t.Errorf("%s: a transcript without model calls:\n%s", name, tr)
			}
			continue
		}
		if n := strings.Count(string(tr), `"event":"request"`); err != nil || n != calls {
			t.Errorf("%s.transcript.jsonl: %d requests (%v), want %d", name, n, err, calls)
		}
	}
}

// statelessModel answers any host's adaptive loop the same way, whatever
// the order requests of many hosts arrive in: a one-phase plan, one
// write_file step, then the text that closes the phase.
func statelessModel(req *testenv.ChatRequest) testenv.Reply {
	if len(req.ToolChoice) > 0 { // the planning request requires a call (step requests offer submit_plan too)
		return testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "file_edit", "complexity": "simple",
			"phases": []map[string]any{{"phase": 1, "goal": "write the host's role"}}})))
	}
	if req.LastMessage().Role == "tool" {
		return testenv.Text("Written.")
	}
	return testenv.Calls(testenv.Call("write_file", args(map[string]any{
		"file_path": "{{dir}}/{{inventory_hostname}}.role", "content": "{{inventory_hostname}} is {{role}}\n"})))
}

// TestBatchTaskAdaptive: without --plan-once every host runs the task with
// the model (3 calls each), 10 at a time.
func TestBatchTaskAdaptive(t *testing.T) {
	f := newBatchFixture(t)
	names := batchHostNames()
	replies := make([]testenv.Reply, 3*len(names))
	for i := range replies {
		replies[i] = testenv.Reply{Func: statelessModel}
	}
	srv := startBatchLLM(t, replies...)
	inv := f.inventory("")
	out, errOut, code := f.agent("-i", inv, "--approve", f.approve, "-c", "write each host's role to a file")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 3*len(names) {
		t.Errorf("%d LLM requests, want %d", n, 3*len(names))
	}
	for _, name := range names {
		role := "frontend"
		if strings.HasPrefix(name, "db") {
			role = "database"
		}
		want := fmt.Sprintf("%s is %s\n", name, role)
		if b, err := os.ReadFile(filepath.Join(f.dir, name+".role")); err != nil || string(b) != want {
			t.Errorf("%s: %q (%v), want %q", name, b, err, want)
		}
		if row := tableRow(t, out, name); !strings.Contains(row, " ok ") || !strings.Contains(row, "adaptive") {
			t.Errorf("%s: %q", name, row)
		}
	}
	if !regexp.MustCompile(fmt.Sprintf(`LLM: %d calls, [1-9]\d* prompt \+ [1-9]\d* completion tokens`, 3*len(names))).MatchString(out) {
		t.Errorf("summary (the model's calls and tokens over every host):\n%s", out)
	}
}

// TestBatchPlanOnceCheckCondition: a check_condition step that answers the
// same on every host keeps them on the first host's path: the model is
// asked as often as for one host (the answer comes from the first host's
// run, not from its history, which keeps none).
func TestBatchPlanOnceCheckCondition(t *testing.T) {
	f := newBatchFixture(t)
	script := "{{dir}}/{{inventory_hostname}}.sh"
	replies := []testenv.Reply{
		testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "file_edit", "complexity": "simple",
			"phases": []map[string]any{{"phase": 1, "goal": "make the script print 2 if it prints 1"}}}))),
		testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "sh " + script, "save_output_as": "script_output"}))),
		testenv.Calls(testenv.Call("check_condition", args(map[string]any{"condition": "script_output.strip() == '1'",
			"save_output_as": "prints_one"}))),
		testenv.Calls(testenv.Call("edit_file", args(map[string]any{"file_path": script, "search_pattern": "echo 1",
			"replacement": "echo 2", "condition": "prints_one"}))),
		testenv.Text("The script now prints 2."),
	}
	srv := startBatchLLM(t, replies...)
	names := []string{"web01", "web02", "web03", "web04", "web05"}
	f.writeScripts(names)
	inv := f.inventory("")
	out, errOut, code := f.agent("-i", inv, "--limit", strings.Join(names, ":"), "--plan-once", "--json",
		"--approve", f.approve, "-c", fixTask)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != len(replies) {
		t.Errorf("%d LLM requests, want %d (as for one host)", n, len(replies))
	}
	// The model is told its steps are replayed, and to template what
	// differs per host.
	for i, r := range srv.Requests() {
		if !strings.Contains(string(r.Body), "This is host web01, the first of 5 hosts of a batch run: the steps you run here will be replayed") ||
			!strings.Contains(string(r.Body), "{{inventory_hostname}}") {
			t.Errorf("request %d does not say the steps are replayed:\n%s", i+1, r.Body)
		}
	}
	replays := 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev["event"] == "replay" {
			replays++
			if ev["status"] != "followed" {
				t.Errorf("replay: %s", line)
			}
		}
	}
	if replays != len(names)-1 {
		t.Errorf("%d replay events, want %d", replays, len(names)-1)
	}
	f.checkScripts(names)
}

// TestBatchModelRetryNamesHost: a retried model call says which host's
// work it was for.
func TestBatchModelRetryNamesHost(t *testing.T) {
	f := newBatchFixture(t)
	srv := startBatchLLM(t, append([]testenv.Reply{testenv.RateLimited(10 * time.Millisecond)}, fixScript()...)...)
	f.writeScripts([]string{"web02"})
	inv := f.inventory("")
	out, errOut, code := f.agent("-i", inv, "--limit", "web02", "--approve", f.approve, "-c", fixTask)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d requests, want 5 and the retry", n)
	}
	if !regexp.MustCompile(`(?m)^agent: web02: model: .*retrying in `).MatchString(errOut) {
		t.Errorf("stderr:\n%s", errOut)
	}
	for i, r := range srv.Requests() { // without --plan-once nothing is replayed
		if strings.Contains(string(r.Body), "replayed") {
			t.Errorf("request %d speaks of a replay", i+1)
		}
	}
}

// TestBatchPlanOnceCopiedHostValue: the model wrote the first host's name
// into a step instead of {{inventory_hostname}}; the other host does not
// replay that step (it would get web01's motd) but asks the model itself.
func TestBatchPlanOnceCopiedHostValue(t *testing.T) {
	f := newBatchFixture(t)
	motd := "{{dir}}/{{inventory_hostname}}.motd"
	plan := testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "config", "complexity": "simple",
		"phases": []map[string]any{{"phase": 1, "goal": "write the motd"}}})))
	srv := startBatchLLM(t,
		plan,
		testenv.Calls(testenv.Call("write_file", args(map[string]any{"file_path": motd, "content": "welcome to web01\n"}))),
		testenv.Text("Written."),
		// web02, after it left the plan
		plan,
		testenv.Calls(testenv.Call("write_file", args(map[string]any{"file_path": motd, "content": "welcome to {{inventory_hostname}}\n"}))),
		testenv.Text("Written."),
	)
	inv := f.inventory("")
	out, errOut, code := f.agent("-i", inv, "--limit", "web01:web02", "--plan-once", "--approve", f.approve, "-c",
		"write a motd welcoming to the host")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d LLM requests, want 3 per host", n)
	}
	for _, h := range []string{"web01", "web02"} {
		if b, err := os.ReadFile(filepath.Join(f.dir, h+".motd")); err != nil || string(b) != "welcome to "+h+"\n" {
			t.Errorf("%s.motd: %q (%v)", h, b, err)
		}
	}
	if row := tableRow(t, out, "web02"); !strings.Contains(row, "fallback") {
		t.Errorf("web02: %q", row)
	}
}

// silentHosts listens on n loopback ports that accept connections and
// never answer (a host that hangs in the handshake); max reports the most
// connections open on them at once.
func silentHosts(t *testing.T, n int) (ports []int, most func() int) {
	t.Helper()
	var mu sync.Mutex
	open, top := 0, 0
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				open++
				top = max(top, open)
				mu.Unlock()
				go func() {
					io.Copy(io.Discard, c) // until the client gives up
					c.Close()
					mu.Lock()
					open--
					mu.Unlock()
				}()
			}
		}()
	}
	return ports, func() int {
		mu.Lock()
		defer mu.Unlock()
		return top
	}
}

// TestBatchPlanOnceDialsFirstHostsAtOnce: with --plan-once, the hosts that
// may be the first are dialled --forks at a time, not one after another:
// three hosts that hang in the handshake cost one ConnectTimeout together,
// and the first in inventory order that answers (web01) does the task.
func TestBatchPlanOnceDialsFirstHostsAtOnce(t *testing.T) {
	f := newBatchFixture(t)
	srv := startBatchLLM(t, fixScript()...)
	ports, most := silentHosts(t, 3)
	f.prependConfig("Host 127.0.0.1\n  ConnectTimeout 3\n")
	text := "[hang]\n"
	for i, p := range ports {
		text += fmt.Sprintf("hang%d ansible_host=127.0.0.1 ansible_port=%d\n", i+1, p)
	}
	text += fmt.Sprintf("[web]\nweb[01:02] ansible_host=127.0.0.1 ansible_port=%d\n[all:vars]\ndir=%s\n", f.sshd.Port, f.dir)
	inv := f.writeFile("hosts.ini", text)
	f.writeScripts([]string{"web01", "web02"})
	out, errOut, code := f.agent("-i", inv, "--plan-once", "--forks", "5",
		"--approve", f.approve, "-c", fixTask)
	if code != exitSomeHosts {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitSomeHosts, out, errOut)
	}
	if n := most(); n != 3 {
		t.Errorf("at most %d of the hanging hosts were being dialled at once, want all 3", n)
	}
	// The hanging hosts come first.
	if a, b := strings.Index(out, "\nhang3 "), strings.Index(out, "\nweb01 "); a < 0 || b < 0 || a > b {
		t.Errorf("summary order:\n%s", out)
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d LLM requests, want one host's 5", n)
	}
	if row := tableRow(t, out, "web01"); !strings.Contains(row, " ok ") || !strings.Contains(row, "planned") {
		t.Errorf("web01: %q", row)
	}
	if row := tableRow(t, out, "web02"); !strings.Contains(row, " ok ") || !strings.Contains(row, "replayed") {
		t.Errorf("web02: %q", row)
	}
	for i := range ports {
		if row := tableRow(t, out, fmt.Sprintf("hang%d", i+1)); !strings.Contains(row, "FAILED") || !strings.Contains(row, "no answer within 3s") {
			t.Errorf("hang%d: %q", i+1, row)
		}
	}
	f.checkScripts([]string{"web01", "web02"})
}
