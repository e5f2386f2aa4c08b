package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestMCPOtherUser: another local user (a throwaway uid) cannot call a
// tool of `agent mcp --http`: the generated token is in a 0600 file it
// cannot read (even with the directories above opened), so its real MCP
// client connecting without it is refused; on a unix socket (even one
// made world-writable) its connection is closed unread. The operator's
// uid, with the same client, runs the same command on both: the test
// can fail.
func TestMCPOtherUser(t *testing.T) {
	other := testenv.StartOtherUser(t)
	client := clientBinary(t)
	open := openDir(t, "agent-mcp-other-")
	state := filepath.Join(open, "state")
	home := t.TempDir()
	env := append(mcpEnv(t, home), "XDG_STATE_HOME="+state) // later XDG_STATE_HOME wins
	inv := filepath.Join(home, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	endpoint, before, _ := startMCPServer(t, env, "--http", "127.0.0.1:0", "-i", inv, "--approve", "all")
	re := regexp.MustCompile(`bearer token \(shown once; also in (\S+)\): ([0-9a-f]{64})$`)
	var tokenFile, token string
	for _, l := range before {
		if m := re.FindStringSubmatch(l); m != nil {
			tokenFile, token = m[1], m[2]
		}
	}
	if tokenFile == "" {
		t.Fatalf("no generated token shown: %q", before)
	}
	if b, err := os.ReadFile(tokenFile); err != nil || strings.TrimSpace(string(b)) != token {
		t.Fatalf("token file %s: %q %v", tokenFile, b, err)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", fi.Mode(), err)
	}
	// An operator whose state directory others can enter: only the
	// file's own mode protects the token.
	for d := filepath.Dir(tokenFile); d != open; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	run := func(as *testenv.OtherUser, endpoint, tokenFile, marker string) string {
		t.Helper()
		cmd := exec.Command(client, endpoint, tokenFile, "me", "echo pwned > "+marker)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", raceEnv()}
		if as != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: as.Cred()}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client: %v\n%s", err, out)
		}
		return string(out)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	t.Run("tcp", func(t *testing.T) {
		marker := filepath.Join(open, "tcp-other")
		out := run(&other, endpoint, tokenFile, marker)
		t.Logf("as %s:\n%s", other.Name, out)
		if !strings.Contains(out, "token: open") || !strings.Contains(out, "permission denied") || strings.Contains(out, "result:") {
			t.Errorf("as another user: %s", out)
		}
		if exists(marker) {
			t.Fatal("another user's call ran")
		}
		mine := filepath.Join(open, "tcp-operator")
		if out := run(nil, endpoint, tokenFile, mine); !strings.Contains(out, "result: error=false") || !exists(mine) {
			t.Fatalf("the operator's own call: %s", out)
		}
	})

	t.Run("unix socket", func(t *testing.T) {
		sock := filepath.Join(open, "mcp.sock")
		startMCPServer(t, env, "--http", "unix:"+sock, "-i", inv, "--approve", "all")
		if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("socket mode: %v %v", fi.Mode(), err)
		}
		// The file's mode alone would refuse the connect: open it so that
		// the peer uid check is what is tested.
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(open, "unix-other")
		out := run(&other, "unix:"+sock, "-", marker)
		t.Logf("as %s:\n%s", other.Name, out)
		if !strings.Contains(out, "connect:") || exists(marker) {
			t.Errorf("another user on the socket: %s (ran: %v)", out, exists(marker))
		}
		mine := filepath.Join(open, "unix-operator")
		if out := run(nil, "unix:"+sock, "-", mine); !strings.Contains(out, "result: error=false") || !exists(mine) {
			t.Fatalf("the operator on the socket: %s", out)
		}
	})
}

// openDir is a directory every user may enter and write (as /tmp), removed
// at the end.
func openDir(t *testing.T, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return d
}

// clientBinary is a copy of this test binary, named agent-mcp-client, that
// every user may run.
func clientBinary(t *testing.T) string {
	t.Helper()
	src, err := exec.LookPath("agent-mcp-client")
	if err != nil {
		t.Fatal(err)
	}
	dir := openDir(t, "agent-mcp-client-")
	dst := filepath.Join(dir, "agent-mcp-client")
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestMCPHTTPTokenFlags: --token-file gives the token (refused when others
// can read it); --insecure-no-auth is refused off loopback and with a
// token, and serves on loopback with a warning; the HTTP flags are refused
// without --http.
func TestMCPHTTPTokenFlags(t *testing.T) {
	home := t.TempDir()
	env := mcpEnv(t, home)
	tf := filepath.Join(home, "token")
	if err := os.WriteFile(tf, []byte("from-a-file-0123456789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := agentOut(t, env, "mcp", "--http", "127.0.0.1:0", "--token-file", tf); code != 2 || !strings.Contains(errOut, "chmod 600") {
		t.Errorf("a readable token file: exit %d %s", code, errOut)
	}
	for _, args := range [][]string{
		{"mcp", "--http", "0.0.0.0:0", "--insecure-no-auth"},
		{"mcp", "--http", "127.0.0.1:0", "--insecure-no-auth", "--token-file", tf},
		{"mcp", "--token-file", tf},
		{"mcp", "--allow-origin", "http://x"},
		{"mcp", "--http", "127.0.0.1:0", "--allow-origin", "file:///x"},
		{"mcp", "--http", "unix:relative.sock"},
	} {
		if _, errOut, code := agentOut(t, env, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
	if err := os.Chmod(tf, 0o600); err != nil {
		t.Fatal(err)
	}
	endpoint, before, _ := startMCPServer(t, env, "--http", "127.0.0.1:0", "--token-file", tf)
	if strings.Contains(strings.Join(before, "\n"), "from-a-file") {
		t.Errorf("the operator's token was printed: %q", before)
	}
	for auth, want := range map[string]int{"Bearer from-a-file-0123456789": 200, "": 401} {
		if got := postInit(t, endpoint, auth); got != want {
			t.Errorf("Authorization %q: %d, want %d", auth, got, want)
		}
	}
	endpoint, before, _ = startMCPServer(t, env, "--http", "127.0.0.1:0", "--insecure-no-auth")
	if !strings.Contains(strings.Join(before, "\n"), "warning") {
		t.Errorf("no warning: %q", before)
	}
	if got := postInit(t, endpoint, ""); got != 200 {
		t.Errorf("--insecure-no-auth: %d", got)
	}
}

// postInit posts an initialize request and returns the status.
func postInit(t *testing.T, endpoint, auth string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
