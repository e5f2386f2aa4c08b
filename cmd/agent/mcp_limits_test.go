package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// `agent mcp --read-only` and `--allow-write` limit every call: a write
// outside is a tool error naming the limit, whatever --approve says, and
// the file is untouched.
func TestMCPLimits(t *testing.T) {
	s := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"vub1": s.Host})
	env := mcpEnv(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	target := filepath.Join(s.Home, "limits.txt")

	cs := connectStdio(t, ctx, env, &mcpClient{}, "--approve", "all", "--read-only")
	text, isErr := call(t, ctx, cs, "write_file", map[string]any{"host": "vub1", "file_path": "~/limits.txt", "content": "x\n"})
	if !isErr || !strings.Contains(text, "--read-only: file tools may not write") {
		t.Fatalf("write under --read-only: error=%v %q", isErr, text)
	}
	if text, isErr = call(t, ctx, cs, "execute_command", map[string]any{"host": "vub1", "command": "ls"}); isErr {
		t.Fatalf("a safe step under --read-only: %q", text)
	}

	cs2 := connectStdio(t, ctx, env, &mcpClient{}, "--approve", "all", "--allow-write", "~/ok")
	text, isErr = call(t, ctx, cs2, "write_file", map[string]any{"host": "vub1", "file_path": "~/limits.txt", "content": "x\n"})
	if !isErr || !strings.Contains(text, "which `write:` does not allow (permissions of --allow-write)") {
		t.Fatalf("write outside --allow-write: error=%v %q", isErr, text)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the file was written")
	}
}
