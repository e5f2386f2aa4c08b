package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// inMemory serves s to a client in this process.
func inMemory(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestConnectionKeptRedialledIdleClosed: calls to one host share its
// connection; a connection cut between calls is redialled by the next
// call; an idle one is closed.
func TestConnectionKeptRedialledIdleClosed(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	proxy := testenv.StartProxy(t, srv.Addr)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	kh := filepath.Join(t.TempDir(), "known_hosts")
	line := fmt.Sprintf("[127.0.0.1]:%d %s", proxy.Port, ssh.MarshalAuthorizedKey(srv.HostKey))
	if err := os.WriteFile(kh, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host cut\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		proxy.Port, srv.User, srv.IdentityFile, kh)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Policy: safety.DefaultPolicy(), SSH: engine.SSHOverrides{ConfigFile: cfg}, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := inMemory(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(cmd string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "cut", "command": cmd}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("%s: %s", cmd, text)
		}
		return text
	}
	// Commands of one connection share its worker shell (transport/ssh):
	// its pid, their $PPID, tells one connection from another.
	first := run("echo $PPID")
	if strings.TrimSpace(first) == "" {
		t.Fatal("no $PPID")
	}
	if again := run("echo $PPID"); again != first {
		t.Errorf("second call on a new connection: %q, then %q", first, again)
	}
	proxy.CutAll()
	// A connection known to be dead is dialled again; one cut a moment ago
	// may not be known yet (the client reads the end of the TCP stream in
	// its own goroutine), and a command sent on it then fails, since it may
	// have run: wait until the client saw the cut.
	tr, ok := func() (*sshtr.Transport, bool) {
		s.hosts.mu.Lock()
		defer s.hosts.mu.Unlock()
		var c *hostConn
		for k, hc := range s.hosts.conns { // the one client's connection
			if _, host := splitKey(k); host == "cut" {
				c = hc
			}
		}
		if c == nil || c.h == nil {
			return nil, false
		}
		tr, ok := c.h.Transport().(*sshtr.Transport)
		return tr, ok
	}()
	if !ok {
		t.Fatal("no SSH transport open for the host")
	}
	for cutSeen := time.Now().Add(10 * time.Second); tr.Connected(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(cutSeen) {
			t.Fatal("the client never saw the cut")
		}
	}
	if after := run("echo $PPID"); after == first {
		t.Errorf("after the cut: same connection %q", after)
	}
	if s.hosts.open() != 1 {
		t.Fatalf("%d connections open", s.hosts.open())
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.hosts.open() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle connection not closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := run("echo back"); !strings.HasPrefix(out, "back") {
		t.Errorf("after the idle close: %q", out)
	}
}

// TestHostForms: the host parameter takes what its description lists —
// an ssh_config alias, user@host:port, host:port, ssh://user@host:port —
// each reaching the same in-process SSH host.
func TestHostForms(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host vub\n  HostName 127.0.0.1\n  Port %d\n  User %s\n\nHost *\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		srv.Port, srv.User, srv.IdentityFile, srv.KnownHosts)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Policy: safety.DefaultPolicy(), SSH: engine.SSHOverrides{ConfigFile: cfg, User: ""}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := inMemory(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, host := range []string{
		"vub",
		fmt.Sprintf("%s@127.0.0.1:%d", srv.User, srv.Port),
		fmt.Sprintf("ssh://%s@127.0.0.1:%d", srv.User, srv.Port),
		fmt.Sprintf("%s@[127.0.0.1]:%d", srv.User, srv.Port),
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": host, "command": "echo reached"}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || text != "reached\n" {
			t.Errorf("host %q: %q (error %v)", host, text, res.IsError)
		}
	}
}
