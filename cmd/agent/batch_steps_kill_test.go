package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/testenv"
)

// A plan's static steps go to the host's served worker as one batch
// (executor/batch.go): agent killed while the batch's first step runs
// leaves nothing running there and runs none of the steps after it, and
// agent resume asks about the step whose outcome is unknown and, told to
// run it again, runs it and the rest once.

// killPlan's first two steps are safe, the third writes: one batch in
// the default (confined) mode. The first sleeps long enough to be killed
// during; its argument finds its process.
const killPlan = `name: killed
steps:
  - tool: execute_command
    parameters: {command: "sleep 2.317"}
  - tool: execute_command
    parameters: {command: "sleep 0.1"}
  - tool: execute_command
    parameters: {command: "echo s3 >> {{dir}}/count"}
`

func TestBatchKilledMidStep(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { batchKilled(t, sig) })
	}
}

func batchKilled(t *testing.T, sig syscall.Signal) {
	home := t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	tmp := t.TempDir()
	kh := filepath.Join(tmp, "known_hosts")
	b, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(kh, b, 0o644)
	cfg := filepath.Join(tmp, "ssh_config")
	os.WriteFile(cfg, []byte(fmt.Sprintf("Host h\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.Port, d.User, d.IdentityFile, kh)), 0o644)
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	f := &resumeFixture{t: t, bin: agentBinary(t), state: filepath.Join(tmp, "state", "agent"), dir: t.TempDir()}
	plan := f.writePlan(killPlan)
	cmd, out := f.start("-F", cfg, "--ssh-host", "h", "run", plan, "--approve", "medium", "--var", "dir="+f.dir)
	// The batch is sent once the third step's start record is written
	// (ahead of its step_start event).
	deadline := time.Now().Add(60 * time.Second)
	for !recorded(f.state, 3) {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the batch never started; agent said:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for !running("2.317") {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the first step never ran; agent said:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(sig)
	cmd.Wait()
	if sig == syscall.SIGTERM {
		// Its group killed: gone long before it would have ended.
		waitNotRunning(t, "2.317", time.Second)
	}
	// Nothing of the session left: the first step ends (or was killed),
	// the served worker starts nothing more and exits.
	waitNotRunning(t, "2.317", 5*time.Second)
	waitNotRunning(t, home, 5*time.Second)
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(f.dir, "count")); err == nil {
		t.Fatalf("a step after the one agent was stopped in ran; agent said:\n%s", out)
	}
	text, code := f.run("resume", "--rerun-unknown")
	if code != 0 || !strings.Contains(text, "outcome is unknown") {
		t.Fatalf("resume --rerun-unknown: exit %d\n%s", code, text)
	}
	if got := f.lines("count"); strings.Join(got, " ") != "s3" {
		t.Errorf("count: %q, want the third step once", got)
	}
}

// recorded reports whether the only session under state has a start
// record of step n.
func recorded(state string, n int) bool {
	ents, _ := os.ReadDir(filepath.Join(state, "sessions"))
	if len(ents) != 1 {
		return false
	}
	recs, err := session.ReadFile(session.Path(state, ents[0].Name()))
	if err != nil {
		return false
	}
	for _, r := range recs {
		if r.R == session.RecStepStart && r.Step == n {
			return true
		}
	}
	return false
}

// running reports whether a process's command line has s.
func running(s string) bool {
	ents, _ := os.ReadDir("/proc")
	self := fmt.Sprint(os.Getpid())
	for _, e := range ents {
		if e.Name() == self || e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

func waitNotRunning(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for running(s) {
		if time.Now().After(deadline) {
			t.Fatalf("a process with %q still runs after %v", s, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
