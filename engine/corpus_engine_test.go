package engine_test

// Issue 13's attack corpus and the GTFOBins entries through the whole
// engine (engine.Open, RunPlan: classifier, approver, confiner, executor),
// with the kernel enforcement on and, separately, off (the classifier
// alone), each entry a one-step plan without a terminal: by default and at
// --approve medium every attack is denied, and nothing under the scratch
// home changes — locally and over real sshd. The corpus's medium entries
// (rated medium on purpose: an unknown variable, an alias, a write to an
// ordinary file) run for real at --approve medium only with the kernel on,
// after a confined medium step showed the system capabilities gone: they
// must leave the protected files as they were and leak no secret. Without
// the kernel they are only classified: run for real as root, unconfined,
// a bypass could change this machine.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// corpusThroughEngine runs the corpus through open's hosts.
// hostEnv says the host's own login environment holds EnvKeys too (sshd's
// SetEnv): only a confined step loses a host's secret-named variables.
func corpusThroughEngine(t *testing.T, home string, open func(engine.HostOptions) (*engine.Host, error), launcher func(string) ([]byte, error), hostEnv bool) {
	corpustest.Home(t, home)
	before := corpustest.Tree(t, home)
	high, labelled := corpustest.Split(corpustest.Attacks(t, home))
	p := safety.DefaultPolicy()
	// A medium entry the classifier now rates high is an attack like the
	// others; none may be rated safe.
	var medium []string
	for _, cmd := range labelled {
		// A recursive rm or chmod rated high is lowered to medium once its
		// tree is journaled (IfJournaled): the executor runs it at medium.
		switch an := p.Analyze(cmd, home); {
		case an.Level == safety.High && an.IfJournaled.Level == safety.High:
			high = append(high, cmd)
		case an.Level >= safety.Medium:
			medium = append(medium, cmd)
		default:
			t.Errorf("%q = %s, want at least medium", cmd, an.Assessment)
		}
	}
	var run []string
	for _, cmd := range high {
		// Guard: an attack the classifier lets through, or lowers once an
		// undo journal saved what it changes (the executor does, at
		// --approve medium), is a failure here, and is not run for real.
		if an := p.Analyze(cmd, home); an.Level != safety.High || an.IfJournaled.Level != safety.High {
			t.Errorf("%q = %s (%s once journaled), want high (not run)", cmd, an.Assessment, an.IfJournaled)
			continue
		}
		run = append(run, cmd)
	}
	// A step is decided before it is confined (executor.RunStep: decide,
	// then confine), so a denied step never meets the kernel: the whole
	// share runs with the classifier alone (kernel off), and every fourth
	// entry again with the kernel on, which shows an enforced host denies
	// the same way.
	for _, kernel := range []string{"on", "off"} {
		e := engine.Enforcement{Off: kernel == "off", Launcher: launcher}
		for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
			var log eventLog
			h, err := open(engine.HostOptions{Policy: p, Approver: safety.NewApprover(mode, nil), Enforcement: e, Emit: log.Emit})
			if err != nil {
				t.Fatal(err)
			}
			for i, cmd := range run {
				if kernel == "on" && i%4 != 0 {
					continue
				}
				// A step that runs instead of being denied may not end
				// (watch, a loop): it fails here, fast.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				sum, err := h.RunPlan(ctx, &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "attack", Steps: []planner.Step{shellStep(cmd)}}}})
				if err != nil || sum.Denied != 1 || sum.OK != 0 || sum.Errors != 0 {
					t.Errorf("kernel %s, --approve %s: %q: %+v %v, want denied", kernel, mode, cmd, sum, err)
				}
				cancel()
			}
			h.Close()
			corpustest.Same(t, fmt.Sprintf("kernel %s, --approve %s", kernel, mode), before, corpustest.Tree(t, home))
		}
	}
	t.Logf("%d attacks denied by default and at --approve medium with the kernel off, %d with it on", len(run), (len(run)+3)/4)

	// The safe entries (reading the step's own environment) run
	// unattended, kernel on and off: agent's keys, set in its environment
	// (and, over sshd, in the login's: hostEnv), never reach their output.
	safe := corpustest.SafeOnes(corpustest.Attacks(t, home))
	for _, kernel := range []string{"on", "off"} {
		var log eventLog
		h, err := open(engine.HostOptions{Policy: p, Approver: safety.NewApprover(safety.DefaultMode(false), nil),
			Enforcement: engine.Enforcement{Off: kernel == "off", Launcher: launcher}, Emit: log.Emit})
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range safe {
			if a := p.ClassifyCommandAt(cmd, home); a.Level != safety.Safe {
				t.Errorf("%q = %s, want safe", cmd, a)
				continue
			}
			sum, err := h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "env", Steps: []planner.Step{shellStep(cmd)}}}})
			if err != nil || sum.OK != 1 {
				t.Errorf("kernel %s: %q: %+v %v, want it run", kernel, cmd, sum, err)
			}
		}
		h.Close()
		ran := 0
		for _, ev := range log.all() {
			if ev.Step == nil || ev.Step.Output == "" {
				continue
			}
			ran++
			for _, s := range corpustest.Secrets {
				if strings.Contains(ev.Step.Output, s) {
					t.Errorf("kernel %s: %q leaked a secret: %.300q", kernel, ev.Step.Command, ev.Step.Output)
				}
			}
			// Not even redacted: the keys are not in the step's
			// environment (a step could send them out itself). A host's
			// own variables are dropped only by the confined launcher.
			if hostEnv && kernel == "off" {
				continue
			}
			for _, k := range corpustest.EnvKeys {
				if strings.Contains(ev.Step.Output, k+"=") || strings.Contains(ev.Step.Output, k+" ") || strings.Contains(ev.Step.Output, "REDACTED") {
					t.Errorf("kernel %s: %q saw agent's %s: %.300q", kernel, ev.Step.Command, k, ev.Step.Output)
				}
			}
		}
		if ran == 0 {
			t.Errorf("kernel %s: no safe entry printed anything", kernel)
		}
	}
	t.Logf("%d safe entries ran unattended, kernel on and off: agent's keys stayed out", len(safe))

	// The medium entries run for real only confined.
	var log eventLog
	h, err := open(engine.HostOptions{Policy: p, Approver: safety.NewApprover(safety.ModeMedium, nil),
		Enforcement: engine.Enforcement{Require: true, Launcher: launcher}, Emit: log.Emit})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Guard: a confined medium step (FOO=1 makes it medium) must have lost
	// the capabilities that change the system beyond its files (time,
	// admin, network admin, raw sockets, boot, modules, syslog).
	h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "probe",
		Steps: []planner.Step{shellStep("FOO=1 grep -E '^Cap(Eff|Bnd)' /proc/self/status")}}}})
	var probe string
	for _, ev := range log.all() {
		if ev.Step != nil {
			probe = ev.Step.Output
		}
	}
	if err := corpustest.CheckCapsDropped(probe); err != nil {
		t.Fatalf("%v: the medium entries are not run", err)
	}
	for _, cmd := range medium {
		if cmd == "cp ~/work/f ~/notes" {
			// cp itself waits here, not agent: this test runs every entry
			// in one home, and by now "rm ~/work/f; ln -s sub ~/work/f"
			// and "rm -r ~/work/sub; mkfifo ~/work/sub" made ~/work/f a
			// link to a fifo, which cp opens and reads (no writer comes).
			// TestMediumCorpusUndoOtherUser gives each entry a fresh
			// ~/work: there it runs and is undone.
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		h.RunPlan(ctx, &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "medium", Steps: []planner.Step{shellStep(cmd)}}}})
		cancel()
		if d := time.Since(start); d > 25*time.Second {
			t.Errorf("medium %q took %v", cmd, d)
		}
	}
	for _, ev := range log.all() {
		if ev.Step == nil {
			continue
		}
		if ev.Step.Description == "" && ev.Step.Command != "" {
			out, _, _ := strings.Cut(strings.TrimSpace(ev.Step.Output), "\n")
			t.Logf("medium %q: %s (%s) %.100s", ev.Step.Command, ev.Step.Status, ev.Step.Risk, out)
		}
		for _, s := range corpustest.Secrets {
			if strings.Contains(ev.Step.Output, s) {
				t.Errorf("%q leaked a secret: %q", ev.Step.Command, ev.Step.Output)
			}
		}
	}
	after := corpustest.Tree(t, home)
	own := filepath.Join(home, ".local", "state", "agent", "launch") // the launcher and its rules: agent's own
	for _, p := range corpustest.Changed(before, after) {
		if !corpustest.MediumMayChange(home, p) && p != own && !strings.HasPrefix(p, own+"/") {
			t.Errorf("a medium entry changed %s: %q → %q", p, before[p], after[p])
		}
	}
	t.Logf("%d medium entries ran confined at --approve medium: protected files unchanged, no secret out", len(medium))
}

func TestCorpusThroughEngineLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range corpustest.EnvKeys {
		t.Setenv(k, corpustest.Secrets[len(corpustest.Secrets)-1])
	}
	// Commands start in the working directory: the scratch one, not the
	// package's (a medium entry may write an ordinary file there).
	t.Chdir(t.TempDir())
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	corpusThroughEngine(t, home, open, nil, false)
}

func TestCorpusThroughEngineSSHD(t *testing.T) {
	needLandlock(t)
	home := t.TempDir()
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	keys := ""
	for _, k := range corpustest.EnvKeys {
		keys += " " + k + "=" + corpustest.Secrets[len(corpustest.Secrets)-1]
		t.Setenv(k, corpustest.Secrets[len(corpustest.Secrets)-1]) // agent's own: never sent
	}
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + keys + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	corpusThroughEngine(t, home, open, confinetest.Launcher(t), true)
}
