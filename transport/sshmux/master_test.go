package sshmux

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/testenv"
)

// TestThroughMaster runs commands and SFTP through a real OpenSSH master
// to a real sshd: output, exit status and files arrive, and sshd saw one
// login only — the master's.
func TestThroughMaster(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	m := testenv.StartControlMaster(t, d.Host)
	if n := d.Logins(); n != 1 {
		t.Fatalf("logins after the master started: %d, want 1\n%s", n, d.Log())
	}
	ctx := context.Background()
	pid, err := AliveCheck(ctx, m.Socket)
	if err != nil || pid != m.Cmd.Process.Pid {
		t.Fatalf("AliveCheck = %d, %v; want the master's pid %d", pid, err, m.Cmd.Process.Pid)
	}
	c, err := Dial(ctx, m.Socket)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()

	// Several sessions at once, each with stdin, stdout, stderr and a status.
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() { errs <- runOne(c) }()
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}

	// More than a window's worth of output (2 MiB) comes back whole.
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Output("head -c 5000000 /dev/zero")
	if err != nil || len(out) != 5000000 {
		t.Errorf("5 MB of output: %d bytes, %v", len(out), err)
	}

	// The sftp subsystem.
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatalf("sftp through the master: %v", err)
	}
	dir := t.TempDir()
	want := bytes.Repeat([]byte("mux\n"), 100000)
	f, err := sc.Create(dir + "/f")
	if err == nil {
		_, err = f.Write(want)
		f.Close()
	}
	if err != nil {
		t.Fatalf("sftp write: %v", err)
	}
	if got, err := os.ReadFile(dir + "/f"); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the file written over sftp: %d bytes, %v", len(got), err)
	}
	sc.Close()

	// Keepalives are alive checks of the master.
	if _, _, err := c.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		t.Errorf("keepalive through a live master: %v", err)
	}
	if _, _, err := c.SendRequest("no-more-sessions@openssh.com", false, nil); err == nil {
		t.Error("a global request the master would drop the client for was sent")
	}
	if n := d.Logins(); n != 1 {
		t.Errorf("sshd saw %d logins, want the master's one:\n%s", n, d.Log())
	}

	// The master gone, the client sees its connection end and keepalives fail.
	m.Cmd.Process.Kill()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not see the master exit")
	}
	if _, _, err := c.SendRequest("keepalive@openssh.com", true, nil); err == nil {
		t.Error("keepalive answered with the master dead")
	}
}

func runOne(c *gossh.Client) error {
	s, err := c.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()
	var stdout, stderr bytes.Buffer
	s.Stdin = strings.NewReader("in\n")
	s.Stdout, s.Stderr = &stdout, &stderr
	err = s.Run("cat; echo err >&2; exit 3")
	var ee *gossh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 3 || stdout.String() != "in\n" || stderr.String() != "err\n" {
		return errors.New("session: " + errString(err) + " stdout " + stdout.String() + " stderr " + stderr.String())
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestUnsafeMasterSocketRefused: a live master's socket made writable by
// others, or given to another user, is not used.
func TestUnsafeMasterSocketRefused(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	m := testenv.StartControlMaster(t, d.Host)
	ctx := context.Background()
	if _, err := AliveCheck(ctx, m.Socket); err != nil {
		t.Fatalf("the master's own socket: %v", err)
	}
	for _, mode := range []os.FileMode{0o620, 0o602, 0o666} {
		if err := os.Chmod(m.Socket, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := Dial(ctx, m.Socket); !errors.Is(err, ErrUnsafeSocket) {
			t.Errorf("mode %#o: Dial = %v, want ErrUnsafeSocket", mode, err)
		}
		if _, err := AliveCheck(ctx, m.Socket); !errors.Is(err, ErrUnsafeSocket) {
			t.Errorf("mode %#o: AliveCheck = %v, want ErrUnsafeSocket", mode, err)
		}
	}
	if err := os.Chmod(m.Socket, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		t.Skip("giving the socket to another uid needs root")
	}
	if err := os.Chown(m.Socket, 65534, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(ctx, m.Socket); !errors.Is(err, ErrUnsafeSocket) {
		t.Errorf("socket owned by uid 65534: Dial = %v, want ErrUnsafeSocket", err)
	}
	if n := d.Logins(); n != 1 {
		t.Errorf("sshd saw %d logins, want 1", n)
	}
}
