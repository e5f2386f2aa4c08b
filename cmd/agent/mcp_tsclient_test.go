package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPTypeScriptClient drives agent mcp with the official TypeScript
// SDK (testenv/mcpclients, pinned; `npm ci` there, as .ci/run does),
// over stdio and over HTTP with a lowercase bearer: tools listed, a safe
// command run, a medium write asked through elicitation and run, a bad
// argument refused, the write undone.
func TestMCPTypeScriptClient(t *testing.T) {
	dir, _ := filepath.Abs("../../testenv/mcpclients")
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
