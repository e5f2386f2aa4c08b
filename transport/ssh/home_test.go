package ssh

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// HomeDir is the $HOME commands see, which sshd's SetEnv sets apart from the
// password database's home SFTP starts in; it comes with the worker's start
// (no command of its own), and once it is known "~/x" and relative paths of
// the file methods are under it, as they are for commands.
func TestHomeDirIsCommandsHome(t *testing.T) {
	home := t.TempDir()
	h := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + "\n"})
	tr := dial(t, hostConfig(h.Host), Options{})
	ctx := context.Background()
	got, err := tr.HomeDir(ctx)
	if err != nil || got != home {
		t.Fatalf("HomeDir = %q, %v; want %q", got, err, home)
	}
	// The worker reported it: its shell is the one running the next command.
	tr.wmu.Lock()
	w := tr.worker
	tr.wmu.Unlock()
	if w == nil || w.home != home {
		t.Fatalf("the worker did not report $HOME (worker %v)", w != nil)
	}
	if sh := runOK(t, tr, transport.Command{Command: `printf '%s' "$HOME"`}).Stdout; sh != home {
		t.Errorf("commands see HOME=%q, HomeDir %q", sh, home)
	}
	if _, err := tr.WriteFile(ctx, "~/tilde", strings.NewReader("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WriteFile(ctx, "rel", strings.NewReader("r"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"tilde": "t", "rel": "r"} {
		if b, err := os.ReadFile(filepath.Join(home, name)); err != nil || string(b) != want {
			t.Errorf("%s under $HOME: %q, %v", name, b, err)
		}
	}
	if fi, err := tr.Stat(ctx, "~/rel"); err != nil || fi.Size() != 1 {
		t.Errorf("Stat(~/rel) = %v, %v", fi, err)
	}
}

// Without a worker (no bash, no setsid) HomeDir asks the shell once.
func TestHomeDirWithoutWorker(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // the in-process server's commands inherit it
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	got, err := tr.HomeDir(context.Background())
	if err != nil || got != srv.Home {
		t.Fatalf("HomeDir = %q, %v; want %q", got, err, srv.Home)
	}
}
