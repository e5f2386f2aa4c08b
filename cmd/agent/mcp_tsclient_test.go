package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// TestMCPTypeScriptClient drives agent mcp with the official TypeScript
// SDK (testenv/mcpclients, pinned; `npm ci` there, as .ci/run does),
// over stdio and over HTTP with a lowercase bearer: tools listed, a safe
// command run, a medium write asked through elicitation and run, a bad
// argument refused, the write undone.
func TestMCPTypeScriptClient(t *testing.T) {
	dir, node := tsClients(t)
	home := t.TempDir()
	inv := filepath.Join(home, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := mcpEnv(t, home)
	client := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "DONE ") || strings.Contains(string(out), "FAIL") {
			t.Fatalf("node client.mjs %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("%s", strings.TrimSpace(string(out)))
	}
	file := filepath.Join(home, "ts-stdio.txt")
	client("stdio", inv, "-", file)
	if _, err := os.Stat(file); err == nil {
		t.Error("the client's undo left the file it wrote")
	}
	const token = "ts-client-token-3e9a1"
	endpoint, _, _ := startMCPServer(t, append(env, "AGENT_MCP_TOKEN="+token), "--http", "127.0.0.1:0", "-i", inv)
	file = filepath.Join(home, "ts-http.txt")
	client("http", endpoint, token, file)
	if _, err := os.Stat(file); err == nil {
		t.Error("the client's undo left the file it wrote")
	}
}

// TestMCPTypeScriptClients runs testenv/mcpclients/clients.mjs: several
// official TypeScript SDK clients on one `agent mcp --http --approve ask`
// over OpenSSH sshd — a foreign Origin refused, A's "always" not B's nor
// C's, a client leaving with a question open not delaying another's by
// more than a second, and 20 mid-call disconnects leaving no process and
// the host serving (the hidden checks of issue 28, with a real client).
func TestMCPTypeScriptClients(t *testing.T) {
	dir, node := tsClients(t)
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "MaxStartups 200\nMaxSessions 50\n"})
	work, err := os.MkdirTemp(d.Home, ".agent-ts-clients-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"sshd": d.Host})
	const token = "ts-clients-token-81d0"
	endpoint := startHTTP(t, append(mcpEnv(t, home), "AGENT_MCP_TOKEN="+token), "--approve", "ask")
	marker := fmt.Sprintf("sleep 302.%07d", time.Now().UnixNano()%1e7)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "clients.mjs"), endpoint, token, "sshd", work, marker)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "DONE ") || strings.Contains(string(out), "FAIL") {
		t.Fatalf("node clients.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	if b, _ := os.ReadFile(filepath.Join(work, "always.txt")); string(b) != "x\nx\n" {
		t.Errorf("always.txt %q: want A's two lines only", b)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "b.txt")); string(b) != "b\n" {
		t.Errorf("b.txt %q: B2's approved step", b)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(work, "never.txt")); err == nil {
		t.Error("the step of the client that left with its question open ran")
	}
}

// tsClients is testenv/mcpclients, where the TypeScript SDK is installed,
// and node: the test skips without them, and fails with CI=true (.ci/run
// installs them).
func tsClients(t *testing.T) (dir, node string) {
	t.Helper()
	dir, _ = filepath.Abs("../../testenv/mcpclients")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript SDK is not installed (cd %s && npm ci): %v", dir, err)
		}
		t.Skipf("the TypeScript SDK is not installed (cd %s && npm ci)", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	return dir, node
}
