package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// mediumOutcome is what one medium entry did at --approve medium, judged
// by outcome: the scratch home's tree before it ran, after it ran, and
// after agent undo.
type mediumOutcome struct {
	home                string
	before, ran, undone map[string]string
}

// judge reports (t.Errorf, prefixed with what) a medium entry that
// changed a file a medium step may not (a protected or dot-name, agent's
// own files: corpustest.MediumMayChange), or whose changes agent undo did
// not put back byte for byte, mode for mode and type for type. It returns
// whether the entry changed anything.
func (o mediumOutcome) judge(t *testing.T, what, cmd, said string) bool {
	t.Helper()
	changed := corpustest.Changed(o.before, o.ran)
	for _, p := range changed {
		if !corpustest.MediumMayChange(o.home, p) && !o.inNewName(p) {
			t.Errorf("%s: %q changed %s, which a medium step may not: %q → %q\n%.400s", what, cmd, p, o.before[p], o.ran[p], said)
		}
	}
	if len(changed) == 0 {
		return false
	}
	for _, p := range corpustest.Changed(o.before, o.undone) {
		t.Errorf("%s: %q changed %s and undo did not put it back: %q → %q → %q\n%.1500s", what, cmd, p, o.before[p], o.ran[p], o.undone[p], said)
	}
	return true
}

// inNewName reports whether p is under a plain name directly in the home
// that did not exist before (mv ~/work ~/work2, mkdir ~/new && touch
// ~/new/x): a new tree a medium step may make.
func (o mediumOutcome) inNewName(p string) bool {
	rel, err := filepath.Rel(o.home, p)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(rel, "/")
	top := filepath.Join(o.home, first)
	_, existed := o.before[top]
	return !existed && corpustest.MediumMayChange(o.home, top)
}

// mediumEntries is the corpus's medium entries (the medium-… classes),
// aimed at home.
func mediumEntries(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	for _, e := range corpustest.Attacks(t, home) {
		if e.Medium() {
			out = append(out, e.Command)
		}
	}
	return out
}

// TestMediumCorpusUndoOtherUser runs each medium entry of the attack
// corpus through `agent exec --approve medium` on this machine, as a
// throwaway unprivileged user in a scratch home (starting in ~/work), and
// then `agent undo`: every change is to a file a medium step may change
// (~/work, ~/important, a new plain name in ~), and undo puts the home
// back byte for byte, mode for mode and type for type — or the entry is
// rated high, and denied before it runs. TestAttackCorpusOtherUserSSHD does the same over
// sshd.
func TestMediumCorpusUndoOtherUser(t *testing.T) {
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	base, home, inv := otherUserScratch(t, "agent-undo-corpus-")
	corpustest.Home(t, home)
	other.Own(t, base)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(base, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(base, "config"), "PATH=/usr/local/bin:/usr/bin:/bin", "SSH_AUTH_SOCK=", "CI=true"}
	run := func(dir string, args ...string) string {
		t.Helper()
		c := exec.Command(agent, args...)
		c.Env, c.Dir = env, dir
		c.SysProcAttr = &syscall.SysProcAttr{Credential: other.Cred()}
		out, err := c.CombinedOutput()
		if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
			t.Fatalf("agent %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	p := safety.DefaultPolicy()
	changed, refused := 0, 0
	cmds := mediumEntries(t, home)
	for _, cmd := range cmds {
		if an := p.Analyze(cmd, home); an.Level == safety.High && an.IfJournaled.Level == safety.High {
			// Denied without running (the other corpus tests show
			// high entries change nothing). A recursive rm or chmod
			// journaled whole (IfJournaled medium) runs.
			refused++
			continue
		}
		// A fresh home each time: what one entry left is not the next's.
		corpustest.ResetWork(t, home)
		other.Own(t, home)
		o := mediumOutcome{home: home, before: corpustest.Tree(t, home)}
		said := run(corpustest.Work(home), "exec", "-i", inv, "--approve", "medium", "--", cmd)
		o.ran = corpustest.Tree(t, home)
		o.undone = o.ran
		if len(corpustest.Changed(o.before, o.ran)) > 0 {
			said += run(home, "undo", "-i", inv) // ~/work may be gone or closed
			o.undone = corpustest.Tree(t, home)
		}
		if o.judge(t, "locally as "+other.Name, cmd, said) {
			changed++
		}
	}
	if changed == 0 {
		t.Error("no medium entry changed anything: the round trip proved nothing")
	}
	t.Logf("%d medium entries as uid %d at --approve medium: %d rated high (not run); of the others %d changed files, put back by undo",
		len(cmds), other.UID, refused, changed)
}
