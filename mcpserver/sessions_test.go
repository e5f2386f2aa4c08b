package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/testenv"
)

// TestMCPCallsAreSessions: a client's calls are a session that agent
// sessions lists (kind mcp, who called, the steps), running while the
// client is connected and done once it has gone; its changes are undone
// by the session's id, as agent undo ID does.
func TestMCPCallsAreSessions(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host vub\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		srv.Port, srv.User, srv.IdentityFile, srv.KnownHosts)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := New(Options{Policy: safety.DefaultPolicy(), Approve: safety.ModeMedium, SSH: engine.SSHOverrides{ConfigFile: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := inMemory(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := filepath.Join(dir, "f.txt")
	os.WriteFile(f, []byte("before\n"), 0o644)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"host": "vub", "file_path": f, "content": "after\n"}})
	if err != nil || res.IsError {
		t.Fatalf("write_file: %v %s", err, res.Content[0].(*mcp.TextContent).Text)
	}
	sdir, _ := statedir.Dir()
	list, err := session.List(sdir)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %+v, %v", list, err)
	}
	info := list[0]
	if info.Kind != session.KindMCP || info.Target != "vub" || info.Client == "" || info.State != session.StateRunning {
		t.Errorf("the MCP session while the client is connected: %+v", info)
	}
	loaded, err := session.Load(sdir, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	if hp := loaded.Hosts["vub"]; hp != nil {
		for _, r := range hp.Ended {
			if r.Tool == "write_file" && r.Status == "ok" {
				steps++
			}
		}
	}
	if steps != 1 {
		t.Errorf("%d write_file steps recorded, want 1: %+v", steps, loaded.Hosts)
	}
	cs.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		list, _ = session.List(sdir)
		if len(list) == 1 && list[0].State == session.StateDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the client left: %+v", list)
		}
	}
	// agent undo ID: the session's journal on its host.
	target, err := engine.HostTarget("vub", engine.SSHOverrides{ConfigFile: cfg})
	if err != nil {
		t.Fatal(err)
	}
	h, err := engine.Open(ctx, target, engine.DialOptions{}, engine.HostOptions{Policy: safety.DefaultPolicy(), Session: info.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := engine.Undo(ctx, h.Transport(), sdir, info.ID, h.Name, false, nil); err != nil {
		t.Fatalf("undo %s: %v", info.ID, err)
	}
	if b, _ := os.ReadFile(f); string(b) != "before\n" {
		t.Errorf("after undo: %q", b)
	}
}
