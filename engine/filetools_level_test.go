package engine_test

// The file tools obey a shell step's rules of their level (issue 26): at
// --approve medium, write_file may not create ~/.hgrc, ~/.config/tmux.conf,
// a new dot-name in ~, a git hook of a repository in the home or a file in
// ~/.ssh — as `echo > FILE` of a medium shell step may not — locally and
// over real sshd; its ordinary work runs, and a new non-dot name directly
// in ~ is created, journaled, the observation saying so. Judged by the
// scratch home's files.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

func writeStep(file string) planner.Step {
	return planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": file, "content": "[hooks]\npre-commit = id\n"}}
}

func fileToolsHeld(t *testing.T, home string, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	t.Helper()
	mkfileT(t, filepath.Join(home, "src/app/.git/HEAD"), "ref\n")
	mkfileT(t, filepath.Join(home, ".ssh/authorized_keys"), "k\n")
	mkfileT(t, filepath.Join(home, ".config/app/app.conf"), "a\n")
	b := newForcedBed(t)
	o := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e}
	for _, f := range []string{".hgrc", ".config/tmux.conf", ".newdot", "src/app/.git/hooks/post-checkout", ".ssh/new"} {
		got, _ := run(t, open, o, writeStep("~/"+f))
		if len(got) != 1 || got[0].Status == "ok" {
			t.Errorf("write_file ~/%s was not refused: %s", f, show(got))
		}
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("write_file created ~/%s", f)
		}
	}
	up := filepath.Join(t.TempDir(), "tmux.conf")
	mkfileT(t, up, "run-shell id\n")
	got, _ := run(t, open, o, planner.Step{Tool: "upload_file", Parameters: map[string]any{"local_path": up, "remote_path": "~/.config/tmux.conf"}})
	if len(got) != 1 || got[0].Status == "ok" {
		t.Errorf("upload_file to ~/.config/tmux.conf was not refused: %s", show(got))
	}
	if _, err := os.Stat(filepath.Join(home, ".config/tmux.conf")); err == nil {
		t.Error("upload_file created ~/.config/tmux.conf")
	}
	// At safe, read_file reads no more than cat: the kernel hides ~/.npmrc.
	mkfileT(t, filepath.Join(home, ".npmrc"), "//registry/:_authToken=npm-marker-4411\n")
	safe := o
	safe.Approver = safety.NewApprover(safety.ModeNever, nil)
	got, _ = run(t, open, safe, planner.Step{Tool: "read_file", Parameters: map[string]any{"file_path": "~/.npmrc"}})
	if len(got) != 1 || got[0].Status == "ok" || strings.Contains(got[0].Output, "npm-marker-4411") {
		t.Errorf("read_file ~/.npmrc at safe was not refused: %s", show(got))
	}
	for _, f := range []string{".hgrc", ".config/tmux.conf"} {
		got, _ := run(t, open, o, b.step(t, "echo x > ~/"+f))
		if len(got) != 1 || got[0].Status == "ok" {
			t.Errorf("the shell's echo > ~/%s was not refused: %s", f, show(got))
		}
	}
	got, _ = run(t, open, o, writeStep("~/work/new.txt"), writeStep("~/.config/app/new.conf"), writeStep("~/report.txt"))
	for _, s := range got {
		if s.Status != "ok" {
			t.Errorf("ordinary medium work with write_file failed: %s", show(got))
			break
		}
	}
	if len(got) != 3 || !strings.Contains(got[2].Output, "new name directly in ~") {
		t.Errorf("write_file ~/report.txt does not say what was done: %s", show(got))
	}
	if _, err := os.Stat(filepath.Join(home, "report.txt")); err != nil {
		t.Errorf("~/report.txt: %v", err)
	}

	// The shell too: a new non-dot name directly in ~ is created empty
	// first (journaled), then the step writes it; dot-names stay refused;
	// undo removes what the session created.
	o.Session = statedir.NewSessionID()
	dot := shellStep("echo x > ~/.newdot2")
	dot.IgnoreErrors = true
	got, _ = run(t, open, o, shellStep("echo ok > ~/shell-report.txt"), shellStep("echo a >> ~/once.log; echo b >> ~/once.log"), dot)
	if len(got) != 3 || got[0].Status != "ok" || got[1].Status != "ok" || !strings.Contains(got[0].Output, "created ~/shell-report.txt empty") {
		t.Errorf("medium shell writes of new names in ~: %s", show(got))
	}
	if b, _ := os.ReadFile(filepath.Join(home, "shell-report.txt")); string(b) != "ok\n" {
		t.Errorf("~/shell-report.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "once.log")); string(b) != "a\nb\n" {
		t.Errorf("~/once.log = %q", b)
	}
	if _, err := os.Stat(filepath.Join(home, ".newdot2")); err == nil {
		t.Error("a medium shell step created ~/.newdot2")
	}
	undoSession(t, open, o)
	for _, f := range []string{"shell-report.txt", "once.log"} {
		if _, err := os.Lstat(filepath.Join(home, f)); err == nil {
			t.Errorf("undo left ~/%s", f)
		}
	}
}

func TestFileToolsLevelLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := tempHome(t)
	open := localHomeOpener(t, home)
	fileToolsHeld(t, home, open, engine.Enforcement{})
}

func TestFileToolsLevelSSHD(t *testing.T) {
	needLandlock(t)
	home := tempHome(t)
	open, e := sshdHomeOpener(t, home)
	fileToolsHeld(t, home, open, e)
}
