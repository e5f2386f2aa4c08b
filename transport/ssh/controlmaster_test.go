package ssh

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/transporttest"
)

// TestConformanceControlMaster runs the whole transport suite (commands,
// the worker shell, files over SFTP, stat, realpath, home) through the
// operator's ControlMaster: sshd sees the master's login and no other.
func TestConformanceControlMaster(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	m := testenv.StartControlMaster(t, d.Host)
	var w warnings
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		cfg := hostConfig(d.Host)
		cfg.ControlPath = m.Socket
		return transporttest.Fixture{
			Transport: dial(t, cfg, Options{Warn: w.warn}),
			Dir:       scratchDir(t, d.Host),
			Home:      d.Host.Home,
			Root:      os.Geteuid() == 0,
		}
	})
	if n := d.Logins(); n != 1 {
		t.Errorf("sshd saw %d logins, want the master's one:\n%s", n, d.Log())
	}
	if w.String() != "" {
		t.Errorf("warnings: %s", w.String())
	}
}

// TestControlMasterFallback: without a usable master agent dials its own
// connection — silently when there is no socket, with a warning naming
// the reason when the socket is stale, not the operator's, or
// ControlMaster says ssh would not use it either.
func TestControlMasterFallback(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	m := testenv.StartControlMaster(t, d.Host)
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, cfg *HostConfig)
		warn    string // "" = no warning
	}{
		{"missing", func(t *testing.T, cfg *HostConfig) { cfg.ControlPath = m.Socket + ".none" }, ""},
		{"stale", func(t *testing.T, cfg *HostConfig) { cfg.ControlPath = staleSocket(t) }, "stale socket"},
		{"writable by others", func(t *testing.T, cfg *HostConfig) {
			chmod(t, m.Socket, 0o666)
		}, "writable by others"},
		{"ControlMaster yes", func(t *testing.T, cfg *HostConfig) { cfg.ControlMaster = "true" }, "ControlMaster yes"},
		{"ControlMaster ask", func(t *testing.T, cfg *HostConfig) { cfg.ControlMaster = "ask" }, "ControlMaster ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := hostConfig(d.Host)
			cfg.ControlPath = m.Socket
			tc.prepare(t, cfg)
			var w warnings
			before := d.Logins()
			tr := dial(t, cfg, Options{Warn: w.warn})
			runEcho(t, tr)
			if n := d.Logins() - before; n != 1 {
				t.Errorf("logins: %d, want agent's own", n)
			}
			if got := w.String(); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
				t.Errorf("warnings %q, want one with %q", got, tc.warn)
			}
			chmod(t, m.Socket, 0o600)
		})
	}
	// And the master itself, for contrast: no login.
	cfg := hostConfig(d.Host)
	cfg.ControlPath = m.Socket
	for _, master := range []string{"false", "auto", "autoask"} {
		cfg.ControlMaster = master
		before := d.Logins()
		runEcho(t, dial(t, cfg, Options{}))
		if n := d.Logins() - before; n != 0 {
			t.Errorf("ControlMaster %s: %d logins, want none (the master's connection)", master, n)
		}
	}
}

// TestControlMasterGone: when the master exits, the next command dials
// agent's own connection.
func TestControlMasterGone(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	m := testenv.StartControlMaster(t, d.Host)
	cfg := hostConfig(d.Host)
	cfg.ControlPath = m.Socket
	tr := dial(t, cfg, Options{})
	runEcho(t, tr)
	if n := d.Logins(); n != 1 {
		t.Fatalf("logins %d, want 1", n)
	}
	m.Cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for tr.Connected() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	runEcho(t, tr)
	if n := d.Logins(); n != 2 {
		t.Errorf("logins %d, want 2 (the master's, then agent's own)", n)
	}
}

func runEcho(t *testing.T, tr *Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := tr.Run(ctx, transport.Command{Command: "echo via; exit 3"})
	if err != nil || res.Stdout != "via\n" || res.ExitCode != 3 {
		t.Fatalf("run: %+v, %v", res, err)
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// staleSocket is a socket file nothing listens on (a master that died
// without removing it), the operator's and mode 0600.
func staleSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := dir + "/s"
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	chmod(t, p, 0o600)
	return p
}
