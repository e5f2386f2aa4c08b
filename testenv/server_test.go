package testenv

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// dial connects to h and closes the client when t ends.
func dial(t *testing.T, h Host) *ssh.Client {
	t.Helper()
	c, err := h.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type runResult struct {
	stdout, stderr string
	err            error // from Session.Run: nil or *ssh.ExitError
}

// run runs cmd on c with stdin and env set.
func run(t *testing.T, c *ssh.Client, cmd, stdin string, env map[string]string) runResult {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	defer s.Close()
	for k, v := range env {
		if err := s.Setenv(k, v); err != nil {
			t.Fatalf("setenv %s: %v", k, err)
		}
	}
	var stdout, stderr strings.Builder
	s.Stdout, s.Stderr = &stdout, &stderr
	if stdin != "" {
		s.Stdin = strings.NewReader(stdin)
	}
	err = s.Run(cmd)
	return runResult{stdout.String(), stderr.String(), err}
}

func exitStatus(t *testing.T, err error) (int, string) {
	t.Helper()
	if err == nil {
		return 0, ""
	}
	var ee *ssh.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("run: %v (not an exit error)", err)
	}
	return ee.ExitStatus(), ee.Signal()
}

// execSuite checks command execution; it runs against both servers.
func execSuite(t *testing.T, h Host, c *ssh.Client) {
	tests := []struct {
		name, cmd, stdin       string
		env                    map[string]string
		stdout, stderr, signal string
		code                   int
	}{
		{name: "stdout", cmd: "echo hi", stdout: "hi\n"},
		{name: "exit code and stderr", cmd: "echo out; echo err >&2; exit 3", stdout: "out\n", stderr: "err\n", code: 3},
		{name: "stdin", cmd: "cat; echo end", stdin: "line1\nline2", stdout: "line1\nline2end\n"},
		{name: "stdin closed", cmd: "wc -c", stdout: "0\n"},
		{name: "home", cmd: `pwd; echo "$HOME"; cd ~ && pwd`, stdout: h.Home + "\n" + h.Home + "\n" + h.Home + "\n"},
		{name: "user", cmd: `echo "$USER"`, stdout: h.User + "\n"},
		{name: "killed by signal", cmd: "kill -TERM $$", signal: "TERM", code: 128 + 15},
		{name: "no output", cmd: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, c, tt.cmd, tt.stdin, tt.env)
			code, sig := exitStatus(t, r.err)
			if r.stdout != tt.stdout || r.stderr != tt.stderr || code != tt.code || sig != tt.signal {
				t.Errorf("%q: stdout %q stderr %q code %d signal %q; want %q %q %d %q",
					tt.cmd, r.stdout, r.stderr, code, sig, tt.stdout, tt.stderr, tt.code, tt.signal)
			}
		})
	}
}

func TestSSHServerExec(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	c := dial(t, srv.Host)
	execSuite(t, srv.Host, c)

	t.Run("env request", func(t *testing.T) {
		r := run(t, c, `echo "$FOO"`, "", map[string]string{"FOO": "bar baz"})
		if r.err != nil || r.stdout != "bar baz\n" {
			t.Errorf("got %q, %v", r.stdout, r.err)
		}
	})
	t.Run("large output", func(t *testing.T) {
		r := run(t, c, "head -c 3000000 /dev/zero; head -c 1000000 /dev/zero >&2", "", nil)
		if r.err != nil || len(r.stdout) != 3000000 || len(r.stderr) != 1000000 {
			t.Errorf("got %d/%d bytes, %v", len(r.stdout), len(r.stderr), r.err)
		}
	})
}

func TestSSHServerOptions(t *testing.T) {
	home := t.TempDir()
	srv := StartSSHServer(t, SSHServerOptions{User: "alice", Home: home})
	if srv.User != "alice" || srv.Home != home {
		t.Fatalf("User %q Home %q", srv.User, srv.Home)
	}
	r := run(t, dial(t, srv.Host), `pwd; echo "$USER"`, "", nil)
	if r.err != nil || r.stdout != home+"\nalice\n" {
		t.Errorf("got %q, %v", r.stdout, r.err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home); err != nil {
		t.Errorf("Close removed a Home it did not create: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSSHServerAuth(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	cfg, err := srv.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := newSigner()
	if err != nil {
		t.Fatal(err)
	}
	wrongKey := *cfg
	wrongKey.Auth = []ssh.AuthMethod{ssh.PublicKeys(other)}
	wrongUser := *cfg
	wrongUser.User = srv.User + "x"
	for name, cfg := range map[string]*ssh.ClientConfig{"wrong key": &wrongKey, "wrong user": &wrongUser} {
		c, err := ssh.Dial("tcp", srv.Addr, cfg)
		if err == nil {
			c.Close()
			t.Errorf("%s: login succeeded", name)
		} else if !strings.Contains(err.Error(), "unable to authenticate") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSSHServerRefusals(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	c := dial(t, srv.Host)

	ok, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
	if err != nil || ok {
		t.Errorf("keepalive: ok %v err %v; want false, nil", ok, err)
	}
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RequestPty("xterm", 24, 80, nil); err == nil {
		t.Error("pty-req accepted")
	}
	if err := s.Shell(); err == nil {
		t.Error("shell accepted")
	}
	if err := s.RequestSubsystem("nope"); err == nil {
		t.Error("unknown subsystem accepted")
	}
	if _, _, err := c.OpenChannel("x11", nil); err == nil {
		t.Error("x11 channel accepted")
	}
}

func TestSSHServerMaxSessions(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{MaxSessions: 2})
	c := dial(t, srv.Host)
	s1, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	_, err = c.NewSession()
	var oce *ssh.OpenChannelError
	if !errors.As(err, &oce) || oce.Reason != ssh.ResourceShortage {
		t.Fatalf("third session: %v; want ResourceShortage", err)
	}
	// A closed session frees its slot, and finished commands free theirs.
	s1.Close()
	for i := 0; i < 5; i++ {
		if r := run(t, c, "true", "", nil); r.err != nil {
			t.Fatalf("run %d: %v", i, r.err)
		}
	}
	// The limit is per connection.
	c2 := dial(t, srv.Host)
	if r := run(t, c2, "true", "", nil); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestSSHServerSignal(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	c := dial(t, srv.Host)
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("echo started; sleep 1000"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	// Not SIGINT: dash catches it in "sh -c" and loses one that arrives
	// while it forks (with sshd too).
	if err := s.Signal(ssh.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, sig := exitStatus(t, s.Wait()); sig != "TERM" {
		t.Errorf("signal %q; want TERM", sig)
	}
}

// startSleepers starts a command with two background sleeps on c and
// returns the session and their pids.
func startSleepers(t *testing.T, c *ssh.Client) (*ssh.Session, []int) {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("sleep 1000 & echo $!; sleep 1001 & echo $!; wait"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var pids []int
	for range 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatal(err)
		}
		if !processAlive(pid) {
			t.Fatalf("sleep %d not running", pid)
		}
		pids = append(pids, pid)
	}
	return s, pids
}

// waitGone fails t unless every pid is gone (or a zombie) within 5 s.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still running", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func TestSSHServerKillsProcessGroup(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	t.Run("channel closed", func(t *testing.T) {
		s, pids := startSleepers(t, dial(t, srv.Host))
		s.Close()
		waitGone(t, pids)
	})
	t.Run("connection lost", func(t *testing.T) {
		c := dial(t, srv.Host)
		_, pids := startSleepers(t, c)
		c.Close()
		waitGone(t, pids)
	})
	t.Run("server closed", func(t *testing.T) {
		srv := StartSSHServer(t, SSHServerOptions{})
		c := dial(t, srv.Host)
		_, pids := startSleepers(t, c)
		// A detached job outlives its session, as with sshd, until Close.
		r := run(t, c, "sleep 1002 >/dev/null 2>&1 & echo $!", "", nil)
		pid, err := strconv.Atoi(strings.TrimSpace(r.stdout))
		if err != nil || r.err != nil {
			t.Fatalf("detached job: %q %v", r.stdout, r.err)
		}
		if !processAlive(pid) {
			t.Fatal("detached job killed at the end of its session")
		}
		srv.Close()
		waitGone(t, append(pids, pid))
		if _, err := os.Stat(filepath.Dir(srv.IdentityFile)); !os.IsNotExist(err) {
			t.Errorf("temp dir left after Close: %v", err)
		}
	})
}

func TestSSHServerDirectTCPIP(t *testing.T) {
	target := StartSSHServer(t, SSHServerOptions{})
	jump := StartSSHServer(t, SSHServerOptions{})
	jc := dial(t, jump.Host)
	conn, err := jc.Dial("tcp", target.Addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := target.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, target.Addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := ssh.NewClient(sc, chans, reqs)
	defer c.Close()
	if r := run(t, c, "echo through", "", nil); r.err != nil || r.stdout != "through\n" {
		t.Errorf("got %q, %v", r.stdout, r.err)
	}
	if _, err := jc.Dial("tcp", "192.0.2.1:22"); err == nil {
		t.Error("forwarding to a non-loopback address allowed")
	}
}
