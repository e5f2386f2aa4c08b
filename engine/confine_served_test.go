package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// TestServedWorkerSSHD: over a real sshd the launcher sent for the
// session serves as the connection's worker — the host's confined steps
// run in shells it starts, with no launcher process per step — and its
// rules, bound to the files they named when read, are computed again
// when a link on the way to a secret moves between two steps: the secret
// the link now names is denied at the next step, by the same worker.
func TestServedWorkerSSHD(t *testing.T) {
	needLandlock(t)
	state := t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv XDG_STATE_HOME=" + state + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	dir := t.TempDir()
	for _, k := range []string{"keys1", "keys2"} {
		os.Mkdir(filepath.Join(dir, k), 0o700)
		// More than one word: a secret-named file of one word is a
		// secret to the redactor (redact's harvest), and this test is
		// about what the kernel lets a step read.
		os.WriteFile(filepath.Join(dir, k, "key"), []byte("the SECRET-"+k+" line\n"), 0o600)
	}
	if err := os.Symlink("keys1", filepath.Join(dir, "secret")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	// agent-look: `ppid` prints the command line of the step's shell's
	// parent; `cat FILE` prints FILE.
	look := "#!/bin/sh\ncase $1 in\nppid) read -r _ _ _ pp _ < /proc/$PPID/stat; tr '\\0' ' ' < /proc/$pp/cmdline; echo \" pid=$pp\" ;;\ncat) cat \"$2\" ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "agent-look"), []byte(look), 0o755); err != nil {
		t.Fatal(err)
	}
	p := safety.DefaultPolicy()
	p.BinDirs = append(p.BinDirs, filepath.Join(dir, "bin"))
	p.Commands["agent-look"] = safety.Rule{Level: safety.Safe}
	p.SensitivePaths = append(p.SensitivePaths, filepath.Join(dir, "secret"))
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	h, err := engine.Open(context.Background(), target, engine.DialOptions{}, engine.HostOptions{
		Policy: p, Approver: safety.NewApprover(safety.ModeNever, nil), Emit: log.Emit,
		Enforcement: engine.Enforcement{Launcher: confinetest.Launcher(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	step := func(args ...string) *event.Step {
		t.Helper()
		n := len(log.all())
		h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "look", Steps: []planner.Step{{Tool: "execute_command",
			Parameters: map[string]any{"command": filepath.Join(dir, "bin", "agent-look") + " " + strings.Join(args, " ")}}}}}})
		for _, ev := range log.all()[n:] {
			if ev.Kind == event.KindStep {
				return ev.Step
			}
		}
		t.Fatalf("no step event: %s", dump(log.all()[n:]))
		return nil
	}
	first := step("ppid")
	if first.Status != "ok" || !strings.Contains(first.Output, confine.ServeFlag) || first.Risk != "safe" {
		t.Fatalf("the safe step's shell is not the served worker's: %+v", first)
	}
	if s := step("cat", filepath.Join(dir, "keys1", "key")); s.Status == "ok" || strings.Contains(s.Output, "SECRET") {
		t.Errorf("the secret the link names was read: %+v", s)
	}
	if s := step("cat", filepath.Join(dir, "keys2", "key")); s.Status != "ok" || !strings.Contains(s.Output, "SECRET-keys2") {
		t.Fatalf("keys2 is not the secret yet, but: %+v", s)
	}
	os.Remove(filepath.Join(dir, "secret"))
	if err := os.Symlink("keys2", filepath.Join(dir, "secret")); err != nil {
		t.Fatal(err)
	}
	if s := step("cat", filepath.Join(dir, "keys2", "key")); s.Status == "ok" || strings.Contains(s.Output, "SECRET") || !strings.Contains(s.Output, "blocked") {
		t.Errorf("after the link moved, the secret it names was read (stale rules): %+v", s)
	}
	if s := step("cat", filepath.Join(dir, "keys1", "key")); s.Status != "ok" {
		t.Errorf("keys1 is no secret any more, but: %+v", s)
	}
	if s := step("ppid"); s.Output != first.Output {
		t.Errorf("the worker changed: %q, was %q", s.Output, first.Output)
	}
}
