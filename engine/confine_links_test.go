package engine_test

// Links out of protected hierarchies (issue 26): with ~/.ssh/authorized_keys
// and ~/.ssh/config links into ~/dotfiles (stow, yadm), a medium step —
// the level forced, approved by --approve medium — cannot add a key or a
// Match exec line through the links' targets, locally and over a real
// sshd; it still writes the dotfiles beside them.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/safety"
)

func stowHome(t *testing.T, home string) {
	t.Helper()
	for _, f := range []string{"dotfiles/ssh/authorized_keys", "dotfiles/ssh/config", "dotfiles/notes"} {
		mkfileT(t, filepath.Join(home, f), "orig\n")
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{".ssh/authorized_keys": "../dotfiles/ssh/authorized_keys",
		".ssh/config": filepath.Join(home, "dotfiles/ssh/config")} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
}

func linksHeld(t *testing.T, home string, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	t.Helper()
	b := newForcedBed(t)
	o := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e}
	attacks := []string{
		"echo 'ssh-ed25519 AAAA attacker' >> ~/dotfiles/ssh/authorized_keys",
		"echo 'Match exec \"touch /tmp/pwned\"' >> ~/dotfiles/ssh/config",
		"cp ~/dotfiles/notes ~/dotfiles/ssh/authorized_keys",
		"echo key >> ~/.ssh/authorized_keys",
	}
	var got []*event.Step
	for _, a := range attacks {
		st, _ := run(t, open, o, b.step(t, a))
		got = append(got, st...)
	}
	for i, st := range got {
		// The kernel refused it; the observation says so (a link's
		// target is not known to agent's side: "may be the kernel's").
		if st.Status == "ok" || st.Risk != "medium" || !strings.Contains(st.Output, "Permission denied") ||
			!strings.Contains(st.Output, "blocked: write to ") && !strings.Contains(st.Output, "may be the kernel's") {
			t.Errorf("%q was not blocked: %s", attacks[i], show([]*event.Step{st}))
		}
	}
	for _, f := range []string{"authorized_keys", "config"} {
		if b, _ := os.ReadFile(filepath.Join(home, "dotfiles/ssh", f)); string(b) != "orig\n" {
			t.Errorf("~/dotfiles/ssh/%s changed: %q", f, b)
		}
	}
	st, _ := run(t, open, o, b.step(t, "echo more >> ~/dotfiles/notes"))
	if len(st) != 1 || st[0].Status != "ok" {
		t.Errorf("a medium step could not write the dotfiles beside the targets: %s", show(st))
	}
}

func TestLinkTargetsProtectedLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := tempHome(t)
	stowHome(t, home)
	open := localHomeOpener(t, home)
	linksHeld(t, home, open, engine.Enforcement{})
}

func TestLinkTargetsProtectedSSHD(t *testing.T) {
	needLandlock(t)
	home := tempHome(t)
	stowHome(t, home)
	open, e := sshdHomeOpener(t, home)
	linksHeld(t, home, open, e)
}
