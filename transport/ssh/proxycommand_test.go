package ssh

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// TestProxyCommandDial connects through a ProxyCommand (a relay run by
// the user's shell, its %h %p %r %n tokens expanded) to a real sshd,
// runs a command, and checks that a command that fails is a connection
// error carrying what it printed.
func TestProxyCommandDial(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	relay, err := filepath.Abs("testdata/proxy/relay.py")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "log")
	cfg := hostConfig(d.Host)
	cfg.Alias = "viaproxy"
	cfg.ProxyCommand = relay + " %h %p %r %n %% " + log
	tr := dial(t, cfg, Options{})
	res, err := tr.Run(t.Context(), transport.Command{Command: "echo through"})
	tr.Close()
	if err != nil || strings.TrimSpace(res.Stdout) != "through" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	got, _ := os.ReadFile(log)
	if want := "127.0.0.1 " + strconv.Itoa(d.Port) + " " + d.User + " viaproxy %\n"; string(got) != want {
		t.Errorf("tokens: %q, want %q", got, want)
	}

	cfg.ProxyCommand = "sh -c 'echo no route to bastion >&2; exit 7'" // ssh too runs "exec CMD"
	err = tryDial(t, cfg, Options{})
	if !errors.Is(err, transport.ErrConnection) || !strings.Contains(err.Error(), "no route to bastion") || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("failing ProxyCommand: %v", err)
	}
	cfg.ProxyCommand = "nc %z"
	if err = tryDial(t, cfg, Options{}); err == nil || !strings.Contains(err.Error(), "unknown token %z") {
		t.Errorf("bad token: %v", err)
	}
}

// TestMatchExecAndProxyCommandMatchSSHG: Match exec runs as in ssh (its
// tokens, exit status, negation, skipped when the line already failed)
// and ProxyCommand/ProxyJump precedence prints as `ssh -G` prints it.
func TestMatchExecAndProxyCommandMatchSSHG(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for _, conf := range []string{
		"Match exec \"test %h = h\"\n  User matched\n",
		"Match exec \"test %r = nobody\"\n  User matched\n",
		"Match !exec false\n  Port 2201\n",
		"Match exec \"exit 3\"\n  Port 2202\n",
		"Match host nomatch exec \"touch " + marker + "\"\n  User no\n",
		"Host h\n  ProxyCommand ssh -W %h:%p bastion\n",
		"Host h\n  ProxyCommand none\n  ProxyJump j\n",
		"Host h\n  ProxyJump j\n  ProxyCommand nc %h %p\n",
		"Host h\n  ProxyCommand=nc  %h %p # not a comment for ssh\n",
	} {
		g := newSSHG(t, "")
		if err := os.WriteFile(filepath.Join(g.dir, "config"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		want, sshErr := g.run("h")
		cfg, err := Resolve("h", g.opts())
		switch {
		case sshErr != nil || err != nil:
			t.Errorf("%q: ssh -G: %v; agent: %v", conf, sshErr, err)
		default:
			g.compare(conf, cfg, want)
			if (want["proxycommand"] != nil) != (cfg.ProxyCommand != "") {
				t.Errorf("%q: proxycommand: ssh -G %q, agent %q", conf, want["proxycommand"], cfg.ProxyCommand)
			}
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a Match exec after a failed criterion was run")
	}
}
