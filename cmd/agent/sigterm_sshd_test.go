package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// TestSIGTERMOverSSHD: SIGTERM ends `agent run` promptly while a step
// runs on a real sshd host, confined by the launcher kept there: at the
// default approval (a safe step) and at --approve medium (a journaled
// step; a step blocked reading a fifo it made), agent exits 130 within
// seconds and the remote command is gone.
func TestSIGTERMOverSSHD(t *testing.T) {
	state := t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 TMPDIR=" + t.TempDir() + " XDG_STATE_HOME=" + state + "\n"})
	dir := t.TempDir()
	for _, tc := range []struct {
		name, approve, command, match string
	}{
		{"safe", "never", "sleep 301.25", "sleep 301.25"},
		{"medium", "medium", "echo started > " + dir + "/started; exec sleep 302.5", "sleep 302.5"},
		// A fifo made and read by the step: the journal never opens it,
		// and the read blocks until SIGTERM.
		{"fifo", "medium", "mkfifo " + dir + "/ff && cat " + dir + "/ff", "cat " + dir + "/ff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := filepath.Join(t.TempDir(), "slow.yaml")
			os.WriteFile(plan, []byte(fmt.Sprintf("name: slow\nphases:\n  - phase: 1\n    goal: wait\n    steps:\n      - tool: execute_command\n        parameters:\n          command: %q\n", tc.command)), 0o644)
			cmd := exec.Command(agentBinary(t), "-F", d.SSHConfig, "--ssh-host", d.Alias, "run", plan,
				"--approve", tc.approve, "--require-enforcement")
			cmd.Env = append(os.Environ(), "CI=true", "SSH_AUTH_SOCK=", "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					<-exited
				}
				exec.Command("pkill", "-KILL", "-f", tc.match).Run()
			})
			running := func() bool { return exec.Command("pgrep", "-f", "^"+tc.match+"$").Run() == nil }
			for deadline := time.Now().Add(60 * time.Second); !running(); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the step never ran:\n%s", &out)
				}
			}
			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("agent still running 20 s after SIGTERM:\n%s", &out)
			}
			took := time.Since(start)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Errorf("exit: %v, want %d\n%s", err, exitInterrupted, &out)
			}
			for deadline := time.Now().Add(10 * time.Second); running(); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the remote command still runs after agent exited:\n%s", &out)
				}
			}
			t.Logf("agent exited %v after SIGTERM", took.Round(time.Millisecond))
			if !strings.Contains(out.String(), "interrupted") {
				t.Errorf("output does not say interrupted:\n%s", &out)
			}
		})
	}
}
