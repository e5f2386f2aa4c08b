package engine_test

// Medium work in a home that lives under a temporary directory (as under
// `go test` and in CI's fresh clone): at --approve all a medium step runs
// unconfined and may create in the home; at --approve medium it runs
// confined, may write what exists in the home and anything in its
// subdirectories, and is told plainly when it tries to create an entry
// directly in the home (which holds protected files no rule may open) —
// while the kernel still stops it creating a missing start-up file.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/testenv"
)

func shellStep(cmd string) planner.Step {
	return planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}}
}

// tempHome makes a home under a temporary directory with a start-up file
// and an existing work directory.
func tempHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

func mediumInHome(t *testing.T, home string, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	t.Helper()
	b := newAttackBed(t, t.TempDir())
	all := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeAll, nil), Enforcement: e}
	steps, _ := run(t, open, all, shellStep("mkdir -p ~/app && echo hi > ~/app/out.txt"))
	if len(steps) != 1 || steps[0].Risk != "medium" || steps[0].Status != "ok" {
		t.Errorf("--approve all: a medium mkdir in the home failed: %s", show(steps))
	}
	if got, _ := os.ReadFile(filepath.Join(home, "app", "out.txt")); string(got) != "hi\n" {
		t.Errorf("--approve all: ~/app/out.txt = %q", got)
	}

	medium := all
	medium.Approver = safety.NewApprover(safety.ModeMedium, nil)
	steps, _ = run(t, open, medium, shellStep("echo 2 > ~/work/notes && mkdir -p ~/work/d && echo y > ~/work/d/f && echo x >> ~/app/out.txt"))
	more, _ := run(t, open, medium, shellStep("mkdir ~/app2"))
	steps = append(steps, more...)
	more, _ = run(t, open, medium, b.step("write", filepath.Join(home, ".bash_profile")))
	steps = append(steps, more...)
	if len(steps) != 3 || steps[0].Status != "ok" {
		t.Fatalf("--approve medium: work in the home's directories failed: %s", show(steps))
	}
	if got, _ := os.ReadFile(filepath.Join(home, "work", "d", "f")); string(got) != "y\n" {
		t.Errorf("--approve medium: ~/work/d/f = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(home, "app", "out.txt")); string(got) != "hi\nx\n" {
		t.Errorf("--approve medium: ~/app/out.txt = %q", got)
	}
	if steps[1].Risk != "medium" || steps[1].Status != "error" ||
		!strings.Contains(steps[1].Output, "[blocked: ~/app2 cannot be created, removed or renamed by a medium step: ~ holds protected files") {
		t.Errorf("--approve medium: creating ~/app2 was not blocked with the reason: %s", show(steps[1:2]))
	}
	if steps[2].Risk != "medium" || steps[2].Status != "error" || !strings.Contains(steps[2].Output, "blocked: write to ~/.bash_profile") {
		t.Errorf("--approve medium: a missing start-up file was not blocked by the kernel: %s", show(steps[2:]))
	}
	for _, p := range []string{"app2", ".bash_profile"} {
		if _, err := os.Lstat(filepath.Join(home, p)); err == nil {
			t.Errorf("~/%s was created", p)
		}
	}
}

func TestMediumInTempHomeLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := tempHome(t)
	open := localHomeOpener(t, home)
	mediumInHome(t, home, open, engine.Enforcement{})
}

func TestMediumInTempHomeSSHD(t *testing.T) {
	needLandlock(t)
	home := tempHome(t)
	open, e := sshdHomeOpener(t, home)
	mediumInHome(t, home, open, e)
}

// hostOpener opens the host a kernel test runs its steps on.
type hostOpener = func(engine.HostOptions) (*engine.Host, error)

// localHomeOpener opens this machine with HOME set to home; the caller
// has called localState.
func localHomeOpener(t *testing.T, home string) hostOpener {
	t.Helper()
	t.Setenv("HOME", home)
	return func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
}

// sshdHomeOpener starts a real sshd whose sessions have HOME set to home
// and returns an opener for it and the enforcement that sends the real
// launcher. It calls localState.
func sshdHomeOpener(t *testing.T, home string) (hostOpener, engine.Enforcement) {
	t.Helper()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	return open, engine.Enforcement{Launcher: confinetest.Launcher(t)}
}

// undoSession puts back what session o.Session changed on the host open
// reaches, as agent undo does; an error fails the test.
func undoSession(t *testing.T, open hostOpener, o engine.HostOptions) {
	t.Helper()
	h, err := open(engine.HostOptions{Policy: o.Policy, Session: o.Session})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	state, _ := statedir.Dir()
	if _, err := engine.Undo(context.Background(), h.Transport(), state, o.Session, h.Name, false, nil); err != nil {
		t.Fatalf("undo: %v", err)
	}
}
