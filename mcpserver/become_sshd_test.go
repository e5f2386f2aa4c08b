package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// TestBecomeSSHD: over real sshd, the server's become settings (agent mcp
// -b, -K) and an inventory host's ansible_become make the step tools run
// as root; a host with neither runs as the login user; a run_plan step
// saying become: true is refused unless the server enabled become; the
// become password is in no tool result and in nothing the server writes
// (audit log, undo journal).
func TestBecomeSSHD(t *testing.T) {
	d, su := testenv.StartSudoSSHD(t)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host *\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.Port, d.IdentityFile, d.KnownHosts)), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	if err := os.WriteFile(inv, []byte(fmt.Sprintf("invroot ansible_user=%[1]s ansible_become=yes\nplain ansible_user=%[1]s\npw ansible_user=%[2]s\n",
		su.NoPassUser, su.PassUser)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := func(b engine.Become) *mcp.ClientSession {
		s, err := New(Options{Policy: safety.DefaultPolicy(), Approve: safety.ModeAll, SSH: engine.SSHOverrides{ConfigFile: cfg},
			Inventory: engine.InventorySpec{Sources: []string{inv}}, Become: b})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return inMemory(t, s)
	}
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.Contains(text, su.Password) {
			t.Errorf("%s: the become password is in the result", tool)
		}
		return text, res.IsError
	}
	whoami := func(cs *mcp.ClientSession, host string) string {
		t.Helper()
		out, isErr := call(cs, "execute_command", map[string]any{"host": host, "command": "id -un"})
		if isErr {
			t.Fatalf("%s: %s", host, out)
		}
		return out
	}

	plainServer := open(engine.Become{})
	if out := whoami(plainServer, "invroot"); !strings.Contains(out, "root") {
		t.Errorf("inventory ansible_become=yes over MCP ran as: %q", out)
	}
	if out := whoami(plainServer, "plain"); !strings.Contains(out, su.NoPassUser) {
		t.Errorf("no become over MCP ran as: %q", out)
	}
	plan := "steps:\n  - tool: execute_command\n    become: true\n    parameters: {command: id -un}\n"
	out, isErr := call(plainServer, RunPlanName, map[string]any{"hosts": "plain", "plan": plan})
	if !isErr || !strings.Contains(out, "--become") {
		t.Errorf("run_plan with become: true on a server without become: error %v %q", isErr, out)
	}

	becomeServer := open(engine.Become{Enabled: true, Password: su.Password})
	if out := whoami(becomeServer, "pw"); !strings.Contains(out, "root") {
		t.Errorf("agent mcp -b -K ran as: %q", out)
	}
	dir, err := os.MkdirTemp("/root", ".agent-become-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(conf, []byte("port = 80\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, isErr := call(becomeServer, "edit_file", map[string]any{"host": "pw", "file_path": conf, "search_pattern": "80", "replacement": "8080"}); isErr {
		t.Fatalf("edit_file as root: %s", out)
	}
	out, isErr = call(becomeServer, RunPlanName, map[string]any{"hosts": "plain", "plan": plan})
	if isErr || !strings.Contains(out, "root") {
		t.Errorf("run_plan with become: true on a become server: error %v %q", isErr, out)
	}
	if out, isErr := call(becomeServer, UndoName, map[string]any{"host": "pw"}); isErr {
		t.Errorf("undo through sudo: %s", out)
	}
	if b, _ := os.ReadFile(conf); string(b) != "port = 80\n" {
		t.Errorf("after undo: %q", b)
	}
	// The audit lines name the user each step ran as ("as").
	b, err := os.ReadFile(filepath.Join(state, "agent", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	as := map[string][]string{} // host/tool: as, of the steps' outcome lines in turn
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if m["decision"] == "allowed" {
			a, _ := m["as"].(string)
			k := fmt.Sprint(m["host"], "/", m["tool"])
			as[k] = append(as[k], a)
		}
	}
	for k, want := range map[string][]string{
		"invroot/execute_command": {"root"},
		"plain/execute_command":   {"", "root"}, // id -un, then run_plan's become: true step
		"pw/execute_command":      {"root"},
		"pw/edit_file":            {"root"},
	} {
		if got := as[k]; !slices.Equal(got, want) {
			t.Errorf("audit: %s ran as %q, want %q", k, got, want)
		}
	}
	err = filepath.WalkDir(state, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), su.Password) {
			t.Errorf("%s holds the become password", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
