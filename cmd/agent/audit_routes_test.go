package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/testenv"
)

// TestAuditEveryRoute: every front end — agent run, a batch over an
// inventory, agent exec and its fan-out, agent -c, the REPL read from a
// pipe, agent mcp over stdio and over HTTP (step tools and run_plan) —
// appends, for each step, one chained line (two with the line written
// before it runs) with its principal, host,
// tool, what ran, level, decision, exit code and duration, and for a
// change its undo id and bytes changed; agent undo and the MCP undo tool
// write theirs too.
func TestAuditEveryRoute(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("CI", "true")
	t.Chdir(dir)
	log := filepath.Join(state, "agent", "audit.log")
	lines := func() []map[string]any {
		b, _ := os.ReadFile(log)
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("audit line %q: %v", l, err)
			}
			out = append(out, m)
		}
		return out
	}
	// check checks the step lines after the first n: at least want of
	// them, each complete, one of them a journaled write.
	checkW := func(route string, n, want int, principal string, wantWrite bool) {
		t.Helper()
		all := lines()
		var steps []map[string]any
		for _, m := range all[n:] {
			// A reap line is the next agent mcp's own (principal: the
			// OS user), when the MCP client's close killed the server
			// before: it took over 5 s to end on a loaded machine.
			if m["decision"] != "started" && m["tool"] != "reap" {
				steps = append(steps, m)
			}
		}
		if len(steps) < want {
			t.Errorf("%s: %d step lines, want %d", route, len(steps), want)
			return
		}
		wrote := false
		for _, m := range steps {
			for _, k := range []string{"seq", "prev", "time", "session", "principal", "host", "tool", "risk", "decision", "duration_ms", "exit_code"} {
				if v, ok := m[k]; !ok || v == "" {
					t.Errorf("%s: no %s in %v", route, k, m)
				}
			}
			if m["command"] == nil && m["path"] == nil {
				t.Errorf("%s: neither command nor path in %v", route, m)
			}
			if p, _ := m["principal"].(string); !strings.Contains(p, principal) {
				t.Errorf("%s: principal %q, want %q in it: %v", route, p, principal, m)
			}
			if m["undo"] != nil && m["bytes_changed"] != nil {
				wrote = true
			}
		}
		if wantWrite && !wrote {
			t.Errorf("%s: no line with undo and bytes_changed: %v", route, steps)
		}
	}
	check := func(route string, n, want int, principal string) {
		t.Helper()
		checkW(route, n, want, principal, true)
	}
	// checkUndo checks the lines after the first n: the undo's line
	// before it ran, then its outcome, complete, for file (which it put
	// back to "old\n" or removed).
	checkUndo := func(route string, n int, file, principal, by string) {
		t.Helper()
		var started, done map[string]any
		for _, m := range lines()[n:] {
			if m["tool"] != "undo" {
				continue
			}
			switch m["decision"] {
			case "started":
				started = m
			case "allowed":
				done = m
			}
		}
		if started == nil || done == nil || started["seq"].(float64) >= done["seq"].(float64) {
			t.Errorf("%s: want a started line, then an allowed one: %v, %v", route, started, done)
			return
		}
		for _, k := range []string{"seq", "prev", "time", "session", "principal", "host", "tool", "command", "risk", "decision", "by", "approval", "duration_ms", "exit_code", "bytes_changed", "output"} {
			if v, ok := done[k]; !ok || v == "" {
				t.Errorf("%s: no %s in %v", route, k, done)
			}
		}
		if p, _ := done["principal"].(string); !strings.Contains(p, principal) {
			t.Errorf("%s: principal %q, want %q in it", route, p, principal)
		}
		if done["by"] != by || done["exit_code"] != 0.0 {
			t.Errorf("%s: by %v exit %v, want %s, 0", route, done["by"], done["exit_code"], by)
		}
		if out, _ := done["output"].(string); !strings.Contains(out, file) {
			t.Errorf("%s: output %q does not name %s", route, out, file)
		}
		if b, _ := os.ReadFile(file); string(b) != "old\n" {
			t.Errorf("%s: %s holds %q after the undo", route, file, b)
		}
	}
	run := func(stdin string, args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(args, strings.NewReader(stdin), &out, &errb); code != 0 {
			t.Fatalf("agent %s: exit %d\n%s\n%s", strings.Join(args, " "), code, &out, &errb)
		}
	}
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte("name: p\nsteps:\n  - tool: execute_command\n    parameters: {command: \"echo hi\"}\n"+
		"  - tool: write_file\n    parameters: {file_path: \"{{out}}\", content: \"x\\n\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	n := len(lines())
	run("", "run", plan, "--approve", "medium", "--var", "out="+filepath.Join(dir, "run.txt"))
	check("agent run", n, 2, "")

	n = len(lines())
	run("", "run", plan, "-i", inv, "--approve", "medium", "--var", "out="+filepath.Join(dir, "batch.txt"))
	check("batch", n, 2, "")

	n = len(lines())
	run("", "--approve", "medium", "exec", "--", "echo x > "+filepath.Join(dir, "exec.txt"))
	// The operator's own command: not rated, not journaled, but in the trail.
	checkW("agent exec", n, 1, audit.OSUser(), false)
	if m := lines()[len(lines())-1]; m["risk"] != "unchecked" || m["tool"] != "exec" || m["by"] != "user" {
		t.Errorf("agent exec: %v", m)
	}
	var listed bytes.Buffer
	if code := Main([]string{"audit", "--level", "unchecked"}, strings.NewReader(""), &listed, &listed); code != 0 ||
		strings.Count(listed.String(), "\n") != 3 || !strings.Contains(listed.String(), "exec.txt") {
		t.Errorf("agent audit --level unchecked: exit %d\n%s", code, &listed)
	}

	n = len(lines())
	run("", "--approve", "medium", "exec", "-i", inv, "--", "echo x > "+filepath.Join(dir, "exec-i.txt"))
	check("agent exec -i (fan-out)", n, 1, "")

	task := func(file string) []testenv.Reply {
		return []testenv.Reply{
			testenv.Calls(testenv.Call("execute_command", `{"command":"echo hi"}`),
				testenv.Call("write_file", `{"file_path":"`+file+`","content":"x\n"}`)),
			testenv.Text("Done."),
		}
	}
	n = len(lines())
	startBatchLLM(t, task(filepath.Join(dir, "task.txt"))...)
	run("", "--mode", "react", "--approve", "medium", "-c", "write it")
	check("agent -c", n, 2, "")

	n = len(lines())
	startBatchLLM(t, task(filepath.Join(dir, "repl.txt"))...)
	run("write it\n", "--mode", "react", "--approve", "medium")
	check("REPL from a pipe", n, 2, "")

	env := mcpEnv(t, dir)
	for i, e := range env {
		if strings.HasPrefix(e, "XDG_STATE_HOME=") {
			env[i] = "XDG_STATE_HOME=" + state
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n = len(lines())
	cs := connectStdio(t, ctx, env, &mcpClient{}, "-i", inv, "--approve", "medium")
	call(t, ctx, cs, "execute_command", map[string]any{"host": "me", "command": "echo hi"})
	stdioFile := filepath.Join(dir, "stdio.txt")
	if err := os.WriteFile(stdioFile, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, ctx, cs, "write_file", map[string]any{"host": "me", "file_path": stdioFile, "content": "x\n"})
	check("agent mcp (stdio)", n, 2, "via mcp agent-test/1")
	n = len(lines())
	if text, isErr := call(t, ctx, cs, "undo", map[string]any{"host": "me"}); isErr {
		t.Fatalf("undo tool: %s", text)
	}
	cs.Close()
	checkUndo("agent mcp undo tool", n, stdioFile, "via mcp agent-test/1", "policy")

	const token = "audit-route-token-5f1c"
	n = len(lines())
	endpoint, _, _ := startMCPServer(t, append(env, "AGENT_MCP_TOKEN="+token), "--http", "127.0.0.1:0", "-i", inv, "--approve", "medium")
	hs := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
	call(t, ctx, hs, "execute_command", map[string]any{"host": "me", "command": "echo hi"})
	httpFile := filepath.Join(dir, "http.txt")
	if err := os.WriteFile(httpFile, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, ctx, hs, "write_file", map[string]any{"host": "me", "file_path": httpFile, "content": "x\n"})
	check("agent mcp (HTTP)", n, 2, "127.0.0.1")
	var id string // the HTTP client's session, which agent undo puts back below
	for _, m := range lines()[n:] {
		if m["path"] == httpFile {
			id, _ = m["session"].(string)
		}
	}
	n = len(lines())
	planFile := filepath.Join(dir, "run_plan.txt")
	if text, isErr := call(t, ctx, hs, "run_plan", map[string]any{"hosts": "me", "plan": "steps:\n  - tool: execute_command\n    parameters: {command: echo hi}\n" +
		"  - tool: write_file\n    parameters: {file_path: " + planFile + ", content: x}\n"}); isErr {
		t.Fatalf("run_plan: %s", text)
	}
	check("agent mcp run_plan (HTTP)", n, 2, "127.0.0.1")
	hs.Close()

	// agent undo of the HTTP client's session, by its id.
	n = len(lines())
	run("", "undo", id, "-i", inv)
	checkUndo("agent undo", n, httpFile, audit.OSUser(), "user")

	if _, errOut, code := agentOut(t, env, "audit", "verify"); code != 0 {
		t.Errorf("verify after every route: %d %s", code, errOut)
	}
}

// TestUndoAuditFailsClosed: an undo whose audit line cannot be written
// (the log on a full disk) restores nothing, and says so.
func TestUndoAuditFailsClosed(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("CI", "true")
	t.Chdir(dir)
	file := filepath.Join(dir, "f.txt")
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte("name: p\nsteps:\n  - tool: write_file\n    parameters: {file_path: \""+file+"\", content: \"new\\n\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", plan, "--approve", "medium"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, &out, &errb)
	}
	log := filepath.Join(state, "agent", "audit.log")
	if err := os.Rename(log, log+".kept"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", log); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code := Main([]string{"undo"}, strings.NewReader(""), &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "nothing was restored") {
		t.Errorf("undo with the audit log on a full disk: exit %d\n%s\n%s", code, &out, &errb)
	}
	if b, _ := os.ReadFile(file); string(b) != "new\n" {
		t.Errorf("%s holds %q: the undo ran unlogged", file, b)
	}
}

// TestAuditFullDiskRoutes: with the audit log on a full disk, agent run,
// agent exec and agent mcp (stdio) refuse the step rather than run it unlogged, and
// say why.
func TestAuditFullDiskRoutes(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("CI", "true")
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join(state, "agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", filepath.Join(state, "agent", "audit.log")); err != nil {
		t.Fatal(err)
	}
	runMarker := filepath.Join(dir, "run-ran")
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte("name: p\nsteps:\n  - tool: execute_command\n    parameters: {command: \"touch "+runMarker+"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"run", plan, "--approve", "all"}, strings.NewReader(""), &out, &errb)
	if code == 0 || !strings.Contains(out.String()+errb.String(), "no space left on device") {
		t.Errorf("agent run with the audit log on a full disk: exit %d\n%s\n%s", code, &out, &errb)
	}
	if _, err := os.Stat(runMarker); err == nil {
		t.Error("agent run ran the step unlogged")
	}
	execMarker := filepath.Join(dir, "exec-ran")
	out.Reset()
	errb.Reset()
	code = Main([]string{"exec", "--", "touch " + execMarker}, strings.NewReader(""), &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "no space left on device") || !strings.Contains(errb.String(), "not run") {
		t.Errorf("agent exec with the audit log on a full disk: exit %d\n%s\n%s", code, &out, &errb)
	}
	if _, err := os.Stat(execMarker); err == nil {
		t.Error("agent exec ran the command unlogged")
	}

	inv := filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := mcpEnv(t, dir)
	for i, e := range env {
		if strings.HasPrefix(e, "XDG_STATE_HOME=") {
			env[i] = "XDG_STATE_HOME=" + state
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := connectStdio(t, ctx, env, &mcpClient{}, "-i", inv, "--approve", "all")
	mcpMarker := filepath.Join(dir, "mcp-ran")
	text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "me", "command": "touch " + mcpMarker})
	if !isErr || !strings.Contains(text, "no space left on device") {
		t.Errorf("agent mcp with the audit log on a full disk: error %v %q", isErr, text)
	}
	if _, err := os.Stat(mcpMarker); err == nil {
		t.Error("agent mcp ran the step unlogged")
	}
	// The server still serves: the next call gets the same refusal.
	if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "me", "command": "touch " + mcpMarker}); !isErr {
		t.Errorf("second call: %q", text)
	}
}

// TestAuditMCPApprovals: who approved a client's step, and how, is in
// its line: a step the client's user approved through elicitation says
// by user and approved; one they declined is denied by user and says so;
// a medium step of a client without elicitation is denied by policy
// (nobody answered), saying that its user could not be asked.
func TestAuditMCPApprovals(t *testing.T) {
	dir := t.TempDir()
	env := mcpEnv(t, dir)
	var state string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	inv := filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	yes, no := filepath.Join(dir, "yes.txt"), filepath.Join(dir, "no.txt")
	c := &mcpClient{answer: func(msg string) *mcp.ElicitResult {
		if strings.Contains(msg, "no.txt") {
			return &mcp.ElicitResult{Action: "decline"}
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	}}
	cs := connectStdio(t, ctx, env, c, "-i", inv)
	call(t, ctx, cs, "write_file", map[string]any{"host": "me", "file_path": yes, "content": "y\n"})
	call(t, ctx, cs, "write_file", map[string]any{"host": "me", "file_path": no, "content": "n\n"})
	cs.Close()
	cs = connectStdio(t, ctx, env, &mcpClient{}, "-i", inv)
	call(t, ctx, cs, "execute_command", map[string]any{"host": "me", "command": "rm -rf " + filepath.Join(dir, "gone")})
	cs.Close()

	b, err := os.ReadFile(filepath.Join(state, "agent", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["decision"] == "started" {
			continue
		}
		what, _ := m["path"].(string)
		if what == "" {
			what, _ = m["command"].(string)
		}
		got[filepath.Base(strings.TrimPrefix(what, "rm -rf "))] = fmt.Sprintf("%v/%v/%v", m["decision"], m["by"], m["approval"])
	}
	for file, want := range map[string][]string{
		"yes.txt": {"allowed/user/", "approved"},
		"no.txt":  {"denied/user/", "answered decline"},
		"gone":    {"denied/policy/", "cannot ask its user"},
	} {
		for _, w := range want {
			if !strings.Contains(got[file], w) {
				t.Errorf("%s: %q, want %q in it", file, got[file], w)
			}
		}
	}
	if _, err := os.Stat(no); err == nil {
		t.Error("the declined write ran")
	}
}
