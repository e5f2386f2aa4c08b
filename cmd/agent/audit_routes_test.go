package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// TestAuditEveryRoute: every front end — agent run, a batch over an
// inventory, agent -c, the REPL read from a pipe, agent mcp over stdio
// and over HTTP — appends, for each step, one chained line with its
// principal, host, tool, what ran, level, decision, exit code and
// duration, and for a change its undo id and bytes changed.
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
	check := func(route string, n, want int, principal string) {
		t.Helper()
		all := lines()
		var steps []map[string]any
		for _, m := range all[n:] {
			if m["decision"] != "started" {
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
				t.Errorf("%s: principal %q, want %q in it", route, p, principal)
			}
			if m["undo"] != nil && m["bytes_changed"] != nil {
				wrote = true
			}
		}
		if !wrote {
			t.Errorf("%s: no line with undo and bytes_changed: %v", route, steps)
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
	call(t, ctx, cs, "write_file", map[string]any{"host": "me", "file_path": filepath.Join(dir, "stdio.txt"), "content": "x\n"})
	cs.Close()
	check("agent mcp (stdio)", n, 2, "via mcp agent-test/1")

	const token = "audit-route-token-5f1c"
	n = len(lines())
	endpoint, _, _ := startMCPServer(t, append(env, "AGENT_MCP_TOKEN="+token), "--http", "127.0.0.1:0", "-i", inv, "--approve", "medium")
	hs := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
	call(t, ctx, hs, "execute_command", map[string]any{"host": "me", "command": "echo hi"})
	call(t, ctx, hs, "write_file", map[string]any{"host": "me", "file_path": filepath.Join(dir, "http.txt"), "content": "x\n"})
	hs.Close()
	check("agent mcp (HTTP)", n, 2, "127.0.0.1")

	if _, errOut, code := agentOut(t, env, "audit", "verify"); code != 0 {
		t.Errorf("verify after every route: %d %s", code, errOut)
	}
}
