package stepgen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// envHosts are the transports the probe is checked through: this machine
// and the in-process SSH server.
func envHosts(t *testing.T) map[string]transport.Transport {
	t.Helper()
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Close() })
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	cfg, err := sshtr.Resolve(srv.Alias, sshtr.ResolveOptions{ConfigFile: srv.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sshtr.Dial(context.Background(), cfg, sshtr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return map[string]transport.Transport{"local": lt, "ssh": st}
}

func sh(t *testing.T, tr transport.Transport, cmd string) string {
	t.Helper()
	res, err := tr.Run(context.Background(), transport.Command{Command: cmd, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%s: %v, exit %d, %s", cmd, err, res.ExitCode, res.Stderr)
	}
	return strings.TrimSpace(res.Stdout)
}

// oldEnv is what the probe printed when it ran uname, id and pwd in
// command substitutions: the reference the builtin-only probe must match.
const oldEnv = `printf 'os: %s\n' "$(uname -sr 2>/dev/null || echo unknown)"; ` +
	`printf 'shell: %s\n' "${SHELL:-unknown}"; ` +
	`printf 'user: %s\n' "$(id -un 2>/dev/null || whoami 2>/dev/null || echo unknown)"; ` +
	`printf 'home: %s\n' "$HOME"; ` +
	`printf 'cwd: %s\n' "$(pwd)"; ` + envContainers

func TestEnvironmentSameAsCommands(t *testing.T) {
	for name, tr := range envHosts(t) {
		t.Run(name, func(t *testing.T) {
			got, err := Environment(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			want := "host: " + tr.Host().Name + "\n" + sh(t, tr, oldEnv)
			if got != want {
				t.Errorf("Environment =\n%s\nwant (uname, id, pwd run as commands)\n%s", got, want)
			}
			for _, line := range []string{"os: " + sh(t, tr, "uname -sr"), "user: " + sh(t, tr, "id -un")} {
				if !strings.Contains(got, "\n"+line+"\n") {
					t.Errorf("Environment lacks %q:\n%s", line, got)
				}
			}
		})
	}
}

// TestEnvironmentStartsNoProcess runs the probe with no PATH: on Linux
// every line but docker must still be right, so it found them without
// starting uname or id.
func TestEnvironmentStartsNoProcess(t *testing.T) {
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(sh(t, lt, oldEnv), "\n")
	got := strings.Split(sh(t, lt, "PATH=/nonexistent; "+envCommand), "\n")
	if len(got) != len(want) {
		t.Fatalf("probe without PATH printed\n%s\nwant the lines of\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want[:len(want)-1] {
		if got[i] != want[i] {
			t.Errorf("line %d without PATH = %q, want %q", i+1, got[i], want[i])
		}
	}
	if got[len(got)-1] != "containers: none (no docker or podman)" {
		t.Errorf("last line without PATH = %q, want containers: none", got[len(got)-1])
	}
}

// TestEnvironmentFallback hides /proc and /etc/passwd from the probe: it
// must fall back to uname and id and print the same lines.
func TestEnvironmentFallback(t *testing.T) {
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	hidden := strings.NewReplacer("/proc/", "/nonexistent/proc/", "/etc/passwd", "/nonexistent/passwd").Replace(envCommand)
	if hidden == envCommand || strings.Contains(hidden, " /proc/") {
		t.Fatal("replacement did not hide /proc")
	}
	if got, want := sh(t, lt, hidden), sh(t, lt, oldEnv); got != want {
		t.Errorf("probe without /proc =\n%s\nwant\n%s", got, want)
	}
	// A uid without a passwd entry falls back to id, as before.
	noUser := strings.Replace(envCommand, "/etc/passwd", "/dev/null", 1)
	if got, want := sh(t, lt, noUser), sh(t, lt, oldEnv); got != want {
		t.Errorf("probe with an empty passwd =\n%s\nwant\n%s", got, want)
	}
}
