package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ControlMaster is OpenSSH's ssh(1) running as a multiplexing master
// (ssh -M -S Socket -N) to a test host, logged in before the test uses it.
type ControlMaster struct {
	// Socket is the control socket's path (short: under os.TempDir, since
	// a Unix socket's path is limited to about 100 bytes).
	Socket string
	// Cmd is the master's process.
	Cmd *exec.Cmd

	stderr *bytes.Buffer
}

// StartControlMaster starts a master to h with h's ssh_config and
// known_hosts (BatchMode: it never asks), waits until its socket accepts
// connections and stops it when t ends. extra are more ssh options (such
// as "-o", "ControlPersist=no"). The test is skipped without ssh(1), or
// fails when CI is "true".
func StartControlMaster(t testing.TB, h Host, extra ...string) *ControlMaster {
	t.Helper()
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ControlMaster test cannot run with CI=true: %v", err)
		}
		t.Skipf("skipping ControlMaster test: %v", err)
	}
	dir, err := os.MkdirTemp("", "cm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := &ControlMaster{Socket: filepath.Join(dir, "s"), stderr: new(bytes.Buffer)}
	args := append([]string{"-F", h.SSHConfig, "-o", "BatchMode=yes", "-M", "-S", m.Socket, "-N"}, extra...)
	m.Cmd = exec.Command(sshBin, append(args, h.Alias)...)
	m.Cmd.Stderr = m.stderr
	if err := m.Cmd.Start(); err != nil {
		t.Fatalf("start ssh -M: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- m.Cmd.Wait() }()
	t.Cleanup(func() {
		m.Cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(sshdStartTimeout)
	for {
		if c, err := net.Dial("unix", m.Socket); err == nil {
			c.Close()
			return m
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("ssh -M exited (%v): %s", err, m.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.Cmd.Process.Kill()
			err := <-exited
			exited <- err
			t.Fatalf("ssh -M: no control socket after %v: %s", sshdStartTimeout, m.stderr.String())
		}
	}
}

// Logins counts the logins sshd has logged so far ("Accepted publickey"
// lines, LogLevel VERBOSE): a test tells a connection of its own from one
// carried by a master with it.
func (d *SSHD) Logins() int {
	return strings.Count(d.Log(), "Accepted publickey")
}

// String names the master for failure messages.
func (m *ControlMaster) String() string {
	return fmt.Sprintf("ssh -M -S %s (pid %d)", m.Socket, m.Cmd.Process.Pid)
}
