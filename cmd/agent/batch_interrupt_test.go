package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentBinary returns a path that runs this test binary as agent (see
// TestMain: testscript.Main dispatches on the program name).
func agentBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "agent")
	if err := os.Symlink(exe, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// slowPlan starts a long command on each host that records its pid.
const slowPlan = `name: slow
phases:
  - phase: 1
    goal: wait
    steps:
      - tool: execute_command
        parameters:
          command: "sh -c 'echo $$ > {{dir}}/{{inventory_hostname}}.pid; exec sleep 300'"
`

// TestBatchInterrupt: Ctrl-C in the middle of a batch starts no new host,
// stops the running ones (their remote commands are gone), still prints
// the summary and exits 130.
func TestBatchInterrupt(t *testing.T) {
	f := newBatchFixture(t)
	plan := f.writeFile("slow.yaml", slowPlan)
	inv := f.inventory("")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(agentBinary(t), "-F", f.sshConfig, "run", plan, "-i", inv, "--forks", "4", "--approve", "all")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
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
	})

	// Wait for the first 4 hosts' commands to run.
	var pids []int
	deadline := time.Now().Add(30 * time.Second)
	for len(pids) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("commands not started; stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
		}
		time.Sleep(50 * time.Millisecond)
		pids = pids[:0]
		matches, _ := filepath.Glob(filepath.Join(f.dir, "*.pid"))
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("agent did not exit after Ctrl-C; stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit: %v, want status %d", err, exitInterrupted)
	}
	out := stdout.String()
	if !strings.Contains(out, "22 hosts: 0 ok, 4 failed, 18 not run") {
		t.Errorf("summary:\nstdout:\n%s\nstderr:\n%s", out, &stderr)
	}
	// Each host's row in the table: the 4 running ones failed where they
	// stopped, the others were not run.
	for _, name := range batchHostNames() {
		row := tableRow(t, out, name)
		if !strings.Contains(row, "interrupted") ||
			!strings.Contains(row, " FAILED ") && !strings.Contains(row, " not run ") {
			t.Errorf("%s: %q", name, row)
		}
	}
	// No command is left running on the host.
	deadline = time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Errorf("remote command (pid %d) still running after agent exited", pid)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
