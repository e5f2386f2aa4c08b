package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
)

// dotfilesHome links ~/.bashrc and ~/.ssh into ~/dotfiles, as stow and
// yadm do.
func dotfilesHome(t *testing.T, home string) {
	t.Helper()
	for _, f := range []string{"dotfiles/bashrc", "dotfiles/ssh/authorized_keys", "dotfiles/notes"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o700))
		must(t, os.WriteFile(filepath.Join(home, f), []byte("orig\n"), 0o600))
	}
	must(t, os.Symlink("dotfiles/bashrc", filepath.Join(home, ".bashrc")))
	must(t, os.Symlink(filepath.Join(home, "dotfiles/ssh"), filepath.Join(home, ".ssh")))
}

// TestMetadataOnProtectedLinkTargets: chmod, chown and touch -d of the
// file a protected link leads to (Landlock does not hold metadata) are
// denied by default and at --approve medium, locally and over a real
// sshd, and change nothing; the same change to a plain dotfile runs at
// --approve medium.
func TestMetadataOnProtectedLinkTargets(t *testing.T) {
	// Modes that let no other user write: those are high anywhere
	// (TestModesOpeningToOthers), which would prove nothing of the links.
	attacks := []string{"chmod 644 ~/dotfiles/bashrc", "chmod 755 ~/dotfiles/ssh",
		"chmod 644 ~/dotfiles/ssh/authorized_keys", "touch -d 2000-01-01 ~/dotfiles/bashrc",
		"cd ~/dotfiles && chmod 644 bashrc"}
	for name, open := range hostsUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			tr, home := open()
			dotfilesHome(t, home)
			before := corpustest.Tree(t, home)
			p := safety.DefaultPolicy()
			run := func(mode safety.Mode, cmd string) Summary {
				e := New(Config{Transport: tr, Policy: p, Approver: safety.NewApprover(mode, nil),
					Session: "dotfiles", Vars: execctx.New(), Emit: func(event.Event) {}})
				src, err := yaml.Marshal(map[string]any{"steps": []any{map[string]any{
					"tool": "execute_command", "parameters": map[string]any{"command": cmd}}}})
				must(t, err)
				sum, err := e.RunPlan(context.Background(), mustParse(t, string(src)))
				must(t, err)
				return sum
			}
			for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
				for _, cmd := range attacks {
					if sum := run(mode, cmd); sum.Denied != 1 || sum.OK != 0 {
						t.Errorf("mode %s: %q: %+v, want denied", mode, cmd, sum)
					}
				}
			}
			corpustest.Same(t, "after the metadata attacks", before, corpustest.Tree(t, home))
			if sum := run(safety.ModeMedium, "chmod 644 ~/dotfiles/notes"); sum.OK != 1 {
				t.Errorf("a plain dotfile: %+v, want it run", sum)
			}
		})
	}
}
