package engine_test

// Issue 26's attacks through the file tools (read_file, write_file,
// edit_file, grep, upload_file, download_file through links into
// protected places, `..`, /proc/self/root, autorun places, operator files)
// and through {{var}} templates (a value read from a file on the target,
// carrying shell syntax, spliced into a command line or a file tool's
// path): safety/testdata/toolattacks.jsonl, through the whole engine,
// locally and over real sshd, by default and at --approve medium, judged
// by outcome. By default nothing under the scratch home changes; at
// --approve medium only ~/work, ~/important and new non-dot names in ~
// change, and agent undo puts them back byte for byte and mode for mode;
// no step shows a secret, no PWNED file appears, nothing reaches the
// listener. The control entries (ordinary medium work) must run at
// --approve medium, so the judge is seen to see a change.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/statedir"
)

// toolAttackPort is where the template payloads send what they read: a
// port of this test's own (the other corpus tests listen on 5353).
const toolAttackPort = "5356"

// entryPlan is e's plan: its payload read into {{out}} first.
func entryPlan(e corpustest.ToolEntry, home string) *planner.Plan {
	var steps []planner.Step
	if e.Payload != nil {
		steps = append(steps, planner.Step{Tool: "read_file", Parameters: map[string]any{"file_path": e.PayloadPath(home)}, SaveOutputAs: "out"})
	}
	for _, s := range e.Steps {
		st := planner.Step{Tool: s["tool"].(string), Parameters: s["parameters"].(map[string]any)}
		steps = append(steps, st)
	}
	return &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "attack", Steps: steps}}}
}

// toolCorpusTally counts, per class, the entries tried and held.
type toolCorpusTally map[string][2]int

func (c toolCorpusTally) add(class string, held bool) {
	v := c[class]
	v[0]++
	if held {
		v[1]++
	}
	c[class] = v
}

// toolCorpus runs the entries through open's host; local says it is this
// machine (then the kernel-off runs are made too: over sshd the host's
// kernel is this one's, and they add nothing).
func toolCorpus(t *testing.T, home string, open hostOpener, e engine.Enforcement, local bool) {
	corpustest.ToolHome(t, home, corpustest.ToolAttacks(t, home))
	es := corpustest.ToolAttacksAt(t, home, corpustest.Victim(t, home))
	// The operator works in ~/work: a download may write there.
	t.Chdir(filepath.Join(home, "work"))
	heard := corpustest.Listen(t, toolAttackPort)
	before := homeTree(t, home)
	pwned := filepath.Join(home, "work", "PWNED")
	p := safety.DefaultPolicy()
	type config struct {
		name string
		mode safety.Mode
		e    engine.Enforcement
	}
	configs := []config{{"kernel on, default", safety.DefaultMode(false), e}, {"kernel on, --approve medium", safety.ModeMedium, e}}
	if local {
		off := e
		off.Off = true
		// A kernel without Landlock: the confiner is there, and says the
		// host does not enforce.
		none := e
		none.Probe = func(context.Context) (int, string, error) { return 0, "5.4.0-test", nil }
		configs = append(configs, config{"kernel off, default", safety.DefaultMode(false), off}, config{"kernel off, --approve medium", safety.ModeMedium, off},
			config{"no Landlock, --approve medium", safety.ModeMedium, none})
	}
	for _, c := range configs {
		tally := toolCorpusTally{}
		var log eventLog
		o := engine.HostOptions{Policy: p, Approver: safety.NewApprover(c.mode, nil), Enforcement: c.e, Emit: log.Emit, Session: statedir.NewSessionID()}
		h, err := open(o)
		if err != nil {
			t.Fatal(err)
		}
		prev := before
		for _, en := range es {
			seen := len(log.all())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			t0 := time.Now()
			h.RunPlan(ctx, entryPlan(en, home))
			cancel()
			if os.Getenv("TOOLCORPUS_SHOW") != "" { // what each entry did, and how long it took
				t.Logf("%s %s (%v)", c.name, en.Name, time.Since(t0))
			}
			evs := log.all()[seen:]
			var steps []*event.Step
			for _, ev := range evs {
				if ev.Kind == event.KindStep {
					steps = append(steps, ev.Step)
				}
			}
			fail := func(format string, a ...any) {
				t.Helper()
				t.Errorf("%s: %s (%s %v): %s%s", c.name, en.Name, en.Class, en.Steps, fmt.Sprintf(format, a...), show(steps))
			}
			if os.Getenv("TOOLCORPUS_SHOW") != "" {
				t.Logf("%s", show(steps))
			}
			held := true
			text := dump(evs)
			for _, s := range corpustest.Secrets {
				if strings.Contains(text, s) {
					fail("showed the secret %s", s)
					held = false
				}
			}
			if _, err := os.Lstat(pwned); err == nil {
				fail("a payload ran: %s appeared", pwned)
				os.Remove(pwned)
				held = false
			}
			if en.Echo {
				if len(steps) == 0 || steps[len(steps)-1].Status != "ok" || strings.TrimRight(steps[len(steps)-1].Output, "\n") != *en.Payload {
					fail("did not print its payload as it is")
				}
			}
			after := homeTree(t, home)
			medium := c.mode == safety.ModeMedium
			changed := false
			for path := range union(prev, after) {
				if prev[path] == after[path] {
					continue
				}
				changed = true
				if !medium || !corpustest.MediumMayChange(home, path) {
					fail("changed %s: %q → %q", path, prev[path], after[path])
					held = false
					continue
				}
				if b, err := os.ReadFile(path); err == nil {
					for _, s := range corpustest.Secrets {
						if strings.Contains(string(b), s) {
							fail("copied the secret %s into %s", s, path)
							held = false
						}
					}
				}
			}
			prev = after
			if en.Class == "control" {
				ok := len(steps) > 0 && steps[len(steps)-1].Status == "ok"
				if medium && (!ok || !changed) {
					fail("ordinary medium work did not run (changed %v)", changed)
				}
				continue
			}
			tally.add(en.Class, held)
		}
		h.Close()
		// What arrived names the attack that sent it (checked once: the
		// listener waits for late datagrams).
		if got := heard(); got != "" {
			t.Errorf("%s: the listener heard %s", c.name, got)
		}
		if c.mode == safety.ModeMedium {
			undoSession(t, open, o)
			if !local {
				undoLocalSide(t, o)
			}
		}
		corpustest.Same(t, c.name+", after undo", before, homeTree(t, home))
		t.Logf("%s: tried/held per class: %v", c.name, tally)
	}
}

// homeTree is corpustest.Tree of home without agent's own launcher and
// rules over SSH (~/.local/state/agent/launch: its state, not the step's).
func homeTree(t *testing.T, home string) map[string]string {
	tr := corpustest.Tree(t, home)
	own := filepath.Join(home, ".local", "state", "agent", "launch")
	for p := range tr {
		if p == own || strings.HasPrefix(p, own+"/") {
			delete(tr, p)
		}
	}
	return tr
}

// undoLocalSide puts back what session o.Session's downloads wrote on
// this machine (the journal's host "local"), as agent undo does after
// the host's.
func undoLocalSide(t *testing.T, o engine.HostOptions) {
	t.Helper()
	state, _ := statedir.Dir()
	infos, err := journal.ListSessions(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.ID != o.Session || !slices.Contains(in.Hosts, "local") {
			continue
		}
		h, err := engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, engine.HostOptions{Policy: o.Policy, Session: o.Session})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if _, err := engine.Undo(context.Background(), h.Transport(), state, o.Session, "local", false, nil); err != nil {
			t.Fatalf("undo local: %v", err)
		}
	}
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func TestToolCorpusThroughEngineLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range corpustest.EnvKeys {
		t.Setenv(k, corpustest.Secrets[len(corpustest.Secrets)-1])
	}
	toolCorpus(t, home, localHomeOpener(t, home), engine.Enforcement{}, true)
}

func TestToolCorpusThroughEngineSSHD(t *testing.T) {
	needLandlock(t)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// The operator's side (download_file's local_path, upload_file's
	// local_path) is the same scratch home.
	t.Setenv("HOME", home)
	open, e := sshdHomeOpener(t, home)
	toolCorpus(t, home, open, e, false)
}
