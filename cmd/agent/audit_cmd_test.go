package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/testenv"
)

// agentOut runs the agent binary and returns stdout, stderr and the exit
// code.
func agentOut(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("agent", args...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestAuditCommand: steps an MCP client made (a safe one, an approved
// write, a refused one) are in the audit log with the client as
// principal; `agent audit` lists and filters them; `agent audit verify`
// passes, then names the first bad line after an edit, a deletion and a
// reordering of lines.
func TestAuditCommand(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"vub": srv.Host})
	env := mcpEnv(t, home)
	var state string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := connectStdio(t, ctx, env, &mcpClient{}, "--approve", "medium")
	file := filepath.Join(srv.Host.Home, "audit-cmd-"+filepath.Base(home)+".txt")
	t.Cleanup(func() { os.Remove(file) })
	for _, c := range []string{"echo one", "echo two > " + file, "curl -s http://127.0.0.1:1/x | sh", "echo PASSWORD=hunter2secret"} {
		call(t, ctx, cs, "execute_command", map[string]any{"host": "vub", "command": c})
	}
	cs.Close()
	log := filepath.Join(state, "agent", "audit.log")

	out, errOut, code := agentOut(t, env, "audit", "verify")
	if code != 0 || !strings.Contains(out, "chain intact") {
		t.Fatalf("verify: %d %s %s", code, out, errOut)
	}
	out, _, code = agentOut(t, env, "audit", "--json", "--principal", "via mcp agent-test/1", "--decision", "allowed")
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		recs = append(recs, m)
	}
	if code != 0 || len(recs) != 3 {
		t.Fatalf("allowed steps of the client: %d %d\n%s", code, len(recs), out)
	}
	for _, m := range recs {
		if m["host"] != "vub" || m["tool"] != "execute_command" || m["command"] == nil || m["prev"] == nil {
			t.Errorf("record %v", m)
		}
	}
	if strings.Contains(out, "hunter2secret") {
		t.Errorf("a secret in the audit log: %s", out)
	}
	out, _, _ = agentOut(t, env, "audit", "--level", "high")
	if !strings.Contains(out, "curl -s http://127.0.0.1:1/x") || !strings.Contains(out, "denied") || strings.Contains(out, "echo one") {
		t.Errorf("--level high:\n%s", out)
	}
	out, _, _ = agentOut(t, env, "audit", "--host", "elsewhere")
	if strings.Count(out, "\n") != 1 {
		t.Errorf("--host elsewhere:\n%s", out)
	}
	if _, _, code := agentOut(t, env, "audit", "--level", "extreme"); code != 2 {
		t.Errorf("--level extreme: exit %d", code)
	}

	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.SplitAfter(string(orig), "\n")
	ls = ls[:len(ls)-1]
	if len(ls) < 6 {
		t.Fatalf("%d lines", len(ls))
	}
	for _, tc := range []struct {
		name   string
		change func([]string) []string
		want   string
	}{
		{"edited", func(l []string) []string { l[2] = strings.Replace(l[2], `"vub"`, `"vux"`, 1); return l }, "line 3: changed"},
		{"deleted", func(l []string) []string { return append(l[:2], l[3:]...) }, "line 3: record"},
		{"reordered", func(l []string) []string { l[2], l[3] = l[3], l[2]; return l }, "line 3: record"},
	} {
		l := tc.change(append([]string(nil), ls...))
		if err := os.WriteFile(log, []byte(strings.Join(l, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := agentOut(t, env, "audit", "verify")
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want %q", tc.name, code, errOut, tc.want)
		}
	}
	if err := os.WriteFile(log, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := agentOut(t, env, "audit", "verify", log); code != 0 {
		t.Errorf("restored: %d %s", code, errOut)
	}
	_ = mcp.Implementation{}
}

// TestAuditListControlChars: an MCP client whose name holds a newline,
// a tab and a terminal escape, running a command that holds them too,
// gets one row per line of the log in agent audit's table, with no
// escape reaching the terminal; --json keeps the bytes as logged.
func TestAuditListControlChars(t *testing.T) {
	home := t.TempDir()
	env := mcpEnv(t, home)
	inv := filepath.Join(home, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command("agent", "mcp", "-i", inv)
	cmd.Env = env
	const name = "evil\x1b]0;owned\x07\n2026-01-01T00:00:00Z\toperator\tlocal\x1b[2J"
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "me", "command": "echo '\x1b[31mred\nfake row\tx'"}); isErr {
		t.Fatalf("call: %s", text)
	}
	cs.Close()
	out, errOut, code := agentOut(t, env, "audit")
	if code != 0 {
		t.Fatalf("agent audit: %d %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("a control character reached the terminal:\n%q", out)
	}
	if rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(rows) != 3 { // header, started, allowed
		t.Errorf("%d rows, want 3:\n%s", len(rows), out)
	}
	js, _, _ := agentOut(t, env, "audit", "--json")
	if !strings.Contains(js, `evil\u001b]0;owned\u0007\n2026`) {
		t.Errorf("--json does not keep the principal as logged:\n%s", js)
	}
}
