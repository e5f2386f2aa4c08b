package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// A home that cannot be written (immutable, so that root cannot either):
// the launcher goes to $XDG_RUNTIME_DIR, the step is confined, and the
// directories the set-up made there are gone after Close.
func TestLauncherInRuntimeDir(t *testing.T) {
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
	if os.Geteuid() != 0 {
		t.Skip("chattr +i needs root")
	}
	launcher := confinetest.Launcher(t)
	home, runtime := t.TempDir(), t.TempDir()
	os.Chmod(runtime, 0o700)
	if out, err := exec.Command("chattr", "+i", home).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", home).Run() })
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	tr := &sshLike{Transport: lt}
	h := newConfiner(tr, confinerOptions{Policy: safety.DefaultPolicy(), Launcher: launcher, Require: true,
		Home: func(context.Context) (string, error) { return home, nil }})
	c, err := h.Confine(context.Background(), confine.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Wrap) == 0 || !strings.HasPrefix(c.Wrap[0], runtime+"/agent/launch/s.") {
		t.Fatalf("confined by %q, want a launcher in $XDG_RUNTIME_DIR", c.Wrap)
	}
	res, err := tr.Run(context.Background(), transport.Command{Wrap: c.Wrap, Command: "echo confined; echo x > " + shellQuote(runtime+"/x")})
	if err != nil || res.Stdout != "confined\n" || res.ExitCode == 0 {
		t.Errorf("a safe step under the launcher: %+v %v (want it to run, and the write refused)", res, err)
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
	if left, _ := filepath.Glob(filepath.Join(runtime, "*")); len(left) > 0 {
		t.Errorf("left in $XDG_RUNTIME_DIR: %q", left)
	}
}
