package confine

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// stowHome is a home whose ~/.ssh/authorized_keys and ~/.ssh/config are
// links into ~/dotfiles (stow, yadm, home-manager).
func stowHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, f := range []string{"dotfiles/ssh/authorized_keys", "dotfiles/ssh/config", "dotfiles/ssh/rc", "dotfiles/notes", ".ssh/known_hosts"} {
		mkfile(t, filepath.Join(home, f), "x\n")
	}
	for link, target := range map[string]string{".ssh/authorized_keys": "../dotfiles/ssh/authorized_keys",
		".ssh/config": filepath.Join(home, "dotfiles/ssh/config")} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func linkSpec(home string) Spec {
	return Spec{Write: true, NoWrite: []string{home + "/.ssh"}, NoRead: []string{home + "/.ssh"},
		Public: []string{home + "/.ssh/authorized_keys", home + "/.ssh/config", home + "/.ssh/known_hosts"}, LinksIn: []string{home}}
}

func TestLinksInProtectedHierarchies(t *testing.T) {
	home := stowHome(t)
	rs := Compile(linkSpec(home))
	for _, f := range []string{"dotfiles/ssh/authorized_keys", "dotfiles/ssh/config"} {
		if rs.Allows(filepath.Join(home, f), true) {
			t.Errorf("~/%s, the target of a link in ~/.ssh, is writable", f)
		}
		if !rs.Allows(filepath.Join(home, f), false) {
			t.Errorf("~/%s, public, is not readable", f)
		}
	}
	if !rs.Allows(filepath.Join(home, "dotfiles/notes"), true) || !rs.Allows(filepath.Join(home, "dotfiles/ssh/rc"), true) {
		t.Error("the dotfiles beside the targets are not writable")
	}
	// Without LinksIn (as before): the targets were writable.
	s := linkSpec(home)
	s.LinksIn = nil
	if !Compile(s).Allows(filepath.Join(home, "dotfiles/ssh/authorized_keys"), true) {
		t.Error("without LinksIn the target is protected all the same: the test proves nothing")
	}

	// A link made in ~/.ssh after the rules were computed makes them
	// stale, and the next ones protect its target.
	time.Sleep(10 * time.Millisecond)
	if err := os.Symlink("../dotfiles/ssh/rc", filepath.Join(home, ".ssh/rc")); err != nil {
		t.Fatal(err)
	}
	if !rs.Stale() {
		t.Fatal("a new link in ~/.ssh: the rules are not stale")
	}
	if fresh, _ := rs.Fresh(); fresh.Allows(filepath.Join(home, "dotfiles/ssh/rc"), true) {
		t.Error("the new link's target is writable")
	}
	// So does a link that moves.
	rs = Compile(linkSpec(home))
	os.Remove(filepath.Join(home, ".ssh/rc"))
	if err := os.Symlink("../dotfiles/notes", filepath.Join(home, ".ssh/rc")); err != nil {
		t.Fatal(err)
	}
	if !rs.Stale() {
		t.Fatal("a link in ~/.ssh moved: the rules are not stale")
	}
	if fresh, _ := rs.Fresh(); fresh.Allows(filepath.Join(home, "dotfiles/notes"), true) {
		t.Error("the moved link's target is writable")
	}
}

func TestLinksIntoStoresLeftOut(t *testing.T) {
	for _, tc := range []struct {
		p     string
		write bool
		want  bool
	}{{"/nix/store/abc-hm_authorized_keys", true, false}, {"/gnu/store/x", false, false}, {"/home/u/dotfiles/x", false, true},
		{"/nix/storex/y", false, true}} {
		if got := usefulTarget(tc.p, tc.write); got != tc.want {
			t.Errorf("usefulTarget(%s, %v) = %v, want %v", tc.p, tc.write, got, tc.want)
		}
	}
}
