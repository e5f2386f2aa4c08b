package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// whether the entry changed anything, and whether it did harm.
func (o mediumOutcome) judge(t *testing.T, what, cmd, said string) (changed, harm bool) {
	t.Helper()
	ch := corpustest.Changed(o.before, o.ran)
	for _, p := range ch {
		if !corpustest.MediumMayChange(o.home, p) && !o.inNewName(p) {
			t.Errorf("%s: %q changed %s, which a medium step may not: %q → %q\n%.400s", what, cmd, p, o.before[p], o.ran[p], said)
			harm = true
		}
	}
	if len(ch) == 0 {
		return false, harm
	}
	for _, p := range corpustest.Changed(o.before, o.undone) {
		t.Errorf("%s: %q changed %s and undo did not put it back: %q → %q → %q\n%.1500s", what, cmd, p, o.before[p], o.ran[p], o.undone[p], said)
		harm = true
	}
	return true, harm
}

// tally counts a corpus's entries per class: tried, rated high before
// running, ran and changed files, did harm.
type tally map[string]*[4]int

func (c tally) add(class string, high, changed, harm bool) {
	n := c[class]
	if n == nil {
		n = new([4]int)
		c[class] = n
	}
	n[0]++
	for i, b := range []bool{high, changed, harm} {
		if b {
			n[i+1]++
		}
	}
}

func (c tally) String() string {
	var out []string
	for class, n := range c {
		out = append(out, fmt.Sprintf("%s: %d tried, %d high, %d changed and undone, %d harmful", class, n[0], n[1], n[2], n[3]))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
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
func mediumEntries(t *testing.T, home string) []corpustest.Entry {
	t.Helper()
	var out []corpustest.Entry
	for _, e := range corpustest.Attacks(t, home) {
		if e.Medium() {
			out = append(out, e)
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
// rated high, and denied before it runs. The same entries go through
// `agent mcp --approve medium` and its undo tool at the same time, in a
// home of their own (mediumThroughMCP). TestAttackCorpusOtherUserSSHD
// does the same over sshd.
func TestMediumCorpusUndoOtherUser(t *testing.T) {
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	t.Run("exec", func(t *testing.T) { t.Parallel(); mediumThroughExec(t, other, agent) })
	t.Run("mcp", func(t *testing.T) { t.Parallel(); mediumThroughMCP(t, other, agent) })
}

// mediumScratch is a scratch home for the medium round trip, owned by
// other, and agent's environment there.
func mediumScratch(t *testing.T, other testenv.OtherUser) (home, inv string, env []string) {
	t.Helper()
	base, home, inv := otherUserScratch(t, "agent-undo-corpus-")
	corpustest.ToolHome(t, home, nil) // with ~/work's links into protected places
	other.Own(t, base)
	return home, inv, otherUserEnv(base, home)
}

func mediumThroughExec(t *testing.T, other testenv.OtherUser, agent string) {
	home, inv, env := mediumScratch(t, other)
	run := func(dir string, args ...string) string {
		t.Helper()
		out, _, err := runAsOther(other, agent, env, dir, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	p := safety.DefaultPolicy()
	changed := 0
	counts := tally{}
	es := mediumEntries(t, home)
	start := time.Now()
	for _, e := range es {
		cmd := e.Command
		if an := p.Analyze(cmd, home); an.Level == safety.High && an.IfJournaled.Level == safety.High {
			// Denied without running (the other corpus tests show
			// high entries change nothing). A recursive rm or chmod
			// journaled whole (IfJournaled medium) runs.
			counts.add(e.Class, true, false, false)
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
		ch, harm := o.judge(t, "locally as "+other.Name, cmd, said)
		counts.add(e.Class, false, ch, harm)
		if ch {
			changed++
		}
	}
	if changed == 0 {
		t.Error("no medium entry changed anything: the round trip proved nothing")
	}
	t.Logf("%d medium entries as uid %d at --approve medium (%s): %s", len(es), other.UID, time.Since(start).Round(time.Millisecond), counts)
}

// mediumSequences are medium steps run one after the other in one
// session, then undone together.
var mediumSequences = [][]string{
	{"echo x >> ~/work/f", "chmod 000 ~/work/f"},
	{"echo y > ~/work/f", "chmod 200 ~/work/f"},
	{"touch ~/work/sub/n", "chmod -R 0 ~/work/sub"},
	{"mkdir ~/work/d2 && echo a > ~/work/d2/x", "chmod 0 ~/work/d2"},
	{"echo z >> ~/work/f", "rm ~/work/f", "mkdir ~/work/f", "chmod 0 ~/work/f"},
}

// mediumThroughMCP runs the same medium entries through one `agent mcp
// --approve medium` (stdio, as the throwaway user): each an
// execute_command call in ~/work, then, when it changed files, the
// server's undo tool for this client's session on the host — judged as
// the exec round trip is (TestMediumCorpusUndoOtherUser).
func mediumThroughMCP(t *testing.T, other testenv.OtherUser, agent string) {
	home, inv, env := mediumScratch(t, other)
	es := mediumEntries(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.Command(agent, "mcp", "-i", inv, "--approve", "medium")
	c.Env, c.Dir = env, home // ~/work is made anew for each entry
	c.SysProcAttr = &syscall.SysProcAttr{Credential: other.Cred(), Pdeathsig: syscall.SIGKILL}
	c.Stderr = &testWriter{t: t}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-medium-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
	if err != nil {
		t.Fatalf("connect to agent mcp: %v", err)
	}
	defer cs.Close()
	p := safety.DefaultPolicy()
	changed, counts, start := 0, tally{}, time.Now()
	for _, e := range es {
		if an := p.Analyze(e.Command, home); an.Level == safety.High && an.IfJournaled.Level == safety.High {
			counts.add(e.Class, true, false, false)
			continue
		}
		corpustest.ResetWork(t, home)
		other.Own(t, home)
		o := mediumOutcome{home: home, before: corpustest.Tree(t, home)}
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		said, _ := call(t, cctx, cs, "execute_command", map[string]any{"host": "me", "command": e.Command, "cwd": corpustest.Work(home)})
		o.ran = corpustest.Tree(t, home)
		o.undone = o.ran
		// Always: a change outside the home (/tmp) is not in the tree,
		// and one session for each entry, as agent exec has.
		u, _ := call(t, cctx, cs, "undo", map[string]any{"host": "me"})
		said += "\nundo: " + u
		o.undone = corpustest.Tree(t, home)
		ccancel()
		ch, harm := o.judge(t, "through agent mcp as "+other.Name, e.Command, said)
		counts.add(e.Class, false, ch, harm)
		if ch {
			changed++
		}
	}
	// Sequences in one session: a later step leaves unreadable what an
	// earlier one changed (its undo checked the earlier state, could
	// not read it and put nothing back, session 13).
	for _, seq := range mediumSequences {
		corpustest.ResetWork(t, home)
		other.Own(t, home)
		o := mediumOutcome{home: home, before: corpustest.Tree(t, home)}
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		var said string
		for _, cmd := range seq {
			out, _ := call(t, cctx, cs, "execute_command", map[string]any{"host": "me", "command": cmd, "cwd": corpustest.Work(home)})
			said += cmd + ": " + out + "\n"
		}
		o.ran = corpustest.Tree(t, home)
		u, _ := call(t, cctx, cs, "undo", map[string]any{"host": "me"})
		said += "undo: " + u
		o.undone = corpustest.Tree(t, home)
		ccancel()
		ch, harm := o.judge(t, "through agent mcp as "+other.Name, strings.Join(seq, " ⏎ "), said)
		counts.add("medium-sequence", false, ch, harm)
		if !ch {
			t.Errorf("%q changed nothing: %s", seq, said)
		}
	}
	if changed == 0 {
		t.Error("through agent mcp: no medium entry changed anything: the round trip proved nothing")
	}
	t.Logf("%d medium entries and %d sequences through agent mcp --approve medium as uid %d (%s): %s",
		len(es), len(mediumSequences), other.UID, time.Since(start).Round(time.Millisecond), counts)
}
