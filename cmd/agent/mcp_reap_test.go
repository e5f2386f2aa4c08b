package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/testenv"
)

// TestMCPReapsAfterSIGKILL: a server killed by SIGKILL leaves its calls'
// commands running, locally and over real sshd; the next `agent mcp` with the same state kills them (their
// process groups are in the dead session's record) and ends the record.
// (Not testenv's in-process SSH server: it ends a session's processes
// itself when the connection drops, as OpenSSH does not.)
func TestMCPReapsAfterSIGKILL(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	// --approve all runs unconfined; by default the (safe) sleeps run
	// confined: the local thread, the served worker over SSH.
	for _, approve := range []string{"all", "never"} {
		t.Run("approve "+approve, func(t *testing.T) { reapsAfterSIGKILL(t, d.Host, approve) })
	}
}

func reapsAfterSIGKILL(t *testing.T, real testenv.Host, approve string) {
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"real": real})
	inv := filepath.Join(home, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := mcpEnv(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func() (*exec.Cmd, *mcp.ClientSession) {
		proc := exec.Command("agent", "mcp", "-i", inv, "--approve", approve)
		proc.Env = env
		proc.Stderr = &testWriter{t: t}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: proc, TerminateDuration: 10 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return proc, cs
	}
	proc, cs := start()
	marker := fmt.Sprintf("sleep 304.%09d", time.Now().UnixNano()%1e9)
	hosts := []string{"me", "real"}
	for _, host := range hosts {
		// A background child too: the whole group goes, not only the shell.
		go cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": host,
			"command": marker + "s & " + marker + "s; echo " + host}})
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(processesWith(marker)) < 2*len(hosts) {
		if time.Now().After(deadline) {
			t.Fatalf("the commands never started: %q", processesWith(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the groups' records are written as the commands start
	if err := proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not proc.Wait: the SDK's transport waits for it (a second Wait
	// races); dead is enough — gone, or a zombie not yet reaped.
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", proc.Process.Pid))
		if err != nil || isZombie(string(b)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("agent mcp still running after SIGKILL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	left := processesWith(marker)
	if len(left) < 2*len(hosts) {
		t.Fatalf("SIGKILL alone ended the commands (nothing to reap): %q", left)
	}
	// The next server reaps them, before any call.
	_, cs2 := start()
	defer cs2.Close()
	deadline = time.Now().Add(30 * time.Second)
	for len(processesWith(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("left running after the next start: %q", processesWith(marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The dead sessions' records are ended, each group accounted for.
	state := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = filepath.Join(v, "agent")
		}
	}
	// The commands are gone once the script killed them; the reaper
	// then writes its records and audit lines: wait for them.
	var problems []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		problems = reapRecorded(t, state, hosts)
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// reapRecorded checks that the dead sessions' records are ended, each
// host's groups killed, and the audit log has each host's reaping
// (before, and what it killed); it returns what does not hold yet.
func reapRecorded(t *testing.T, state string, hosts []string) []string {
	t.Helper()
	var problems []string
	infos, err := session.List(state)
	if err != nil {
		t.Fatal(err)
	}
	reaped := map[string]int{}
	for _, in := range infos {
		if in.Kind != session.KindMCP {
			continue
		}
		recs, _ := session.ReadFile(session.Path(state, in.ID))
		ended, cmds := false, false
		for _, r := range recs {
			switch r.R {
			case session.RecProc:
				cmds = true
			case session.RecReaped:
				if r.Status == "killed" {
					reaped[r.Host]++
				}
			case session.RecEnd:
				ended = true
			}
		}
		if cmds && !ended {
			problems = append(problems, fmt.Sprintf("session %s (%s) not ended after reaping", in.ID, in.Target))
		}
	}
	for _, h := range hosts {
		if reaped[h] == 0 {
			problems = append(problems, fmt.Sprintf("no group killed on %s: %v", h, reaped))
		}
	}
	b, err := os.ReadFile(filepath.Join(state, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{} // host: decisions of its reap lines, in turn
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["tool"] == "reap" {
			h, _ := m["host"].(string)
			lines[h] += fmt.Sprint(m["decision"], " ")
			if out, _ := m["output"].(string); m["decision"] == "allowed" && (!strings.Contains(out, "killed") || m["exit_code"] != 0.0 || m["by"] != "policy") {
				problems = append(problems, fmt.Sprintf("%s: reap line %v", h, m))
			}
		}
	}
	for _, h := range hosts {
		if lines[h] != "started allowed " {
			problems = append(problems, fmt.Sprintf("%s: reap lines %q, want started then allowed", h, lines[h]))
		}
	}
	return problems
}
