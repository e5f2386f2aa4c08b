package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// A plan's static steps run locally as a batch, each command in turn on
// its confined thread (transport.Batch.InTurn): what the run leaves — the
// summary, the events, the audit lines, the undo journal, the files — is
// what a step at a time leaves, and each command is still confined.

// oneAtATime is the local transport taking no batch: a step at a time.
type oneAtATime struct{ *local.Transport }

func (oneAtATime) Batches() bool       { return false }
func (oneAtATime) BatchesInTurn() bool { return false }

// localBatchPlan: two safe steps, a safe one that shows how its process
// is confined, and a medium one that writes (journaled) last; fail is
// step 2's command.
func localBatchPlan(dir, fail string) string {
	return `name: batch
steps:
  - tool: execute_command
    parameters: {command: "uname -r"}
    save_output_as: kernel
  - tool: execute_command
    parameters: {command: "echo two; echo err >&2; ` + fail + `"}
    save_output_as: two
  - tool: execute_command
    parameters: {command: "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status"}
  - tool: execute_command
    parameters: {command: "mkdir -p ` + dir + `/h && echo h > ` + dir + `/h/f && cat ` + dir + `/h/f"}
`
}

// runLocalBatch runs planText locally, batched or a step at a time, with
// a state directory of its own.
func runLocalBatch(t *testing.T, planText string, sequential bool) batchRun {
	t.Helper()
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	policy := safety.DefaultPolicy()
	plan, err := planner.Parse(strings.NewReader(planText), "batch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := planner.Validate(plan, tools.Default(policy), nil); err != nil {
		t.Fatal(err)
	}
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	var tr transport.Transport = lt
	if sequential {
		tr = oneAtATime{lt}
	}
	var run batchRun
	h, err := engine.OpenOn(tr, "local", engine.HostOptions{
		Policy: policy, Approver: safety.NewApprover(safety.ModeMedium, nil),
		Enforcement: engine.Enforcement{Require: true},
		Emit:        func(ev event.Event) { run.events = append(run.events, normalEvent(ev)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if run.sum, err = h.RunPlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	h.Close()
	b, err := os.ReadFile(filepath.Join(state, "agent", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		run.audit = append(run.audit, normalJSON(t, l))
	}
	idx, _ := filepath.Glob(filepath.Join(state, "agent", "*", "*", "*", "index.jsonl"))
	more, _ := filepath.Glob(filepath.Join(state, "agent", "*", "*", "index.jsonl"))
	for _, f := range append(idx, more...) {
		b, _ := os.ReadFile(f)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				run.journal = append(run.journal, normalJSON(t, l))
			}
		}
	}
	slices.Sort(run.journal)
	return run
}

func TestLocalBatchAsSequential(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	seq := runLocalBatch(t, localBatchPlan(dir, "true"), true)
	os.RemoveAll(filepath.Join(dir, "h"))
	bat := runLocalBatch(t, localBatchPlan(dir, "true"), false)
	if !seq.sum.Success || !bat.sum.Success || seq.sum.Steps != 4 || bat.sum.Steps != 4 {
		t.Fatalf("sequential %+v, batched %+v", seq.sum, bat.sum)
	}
	if !slices.Equal(steady(seq.events), steady(bat.events)) {
		t.Errorf("events differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.events, "\n"), strings.Join(bat.events, "\n"))
	}
	if a, b := slices.Sorted(slices.Values(seq.audit)), slices.Sorted(slices.Values(bat.audit)); !slices.Equal(a, b) {
		t.Errorf("audit lines differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.audit, "\n"), strings.Join(bat.audit, "\n"))
	}
	// Batched: every line before a run is written before the commands
	// start (one fsync for them); a step at a time, each before its own.
	if got, want := strings.Join(decisions(bat.audit), " "), "started started started started allowed allowed allowed allowed"; got != want {
		t.Errorf("batched audit decisions %q, want %q", got, want)
	}
	if got, want := strings.Join(decisions(seq.audit), " "), "started allowed started allowed started allowed started allowed"; got != want {
		t.Errorf("sequential audit decisions %q, want %q", got, want)
	}
	if len(seq.journal) == 0 || !slices.Equal(seq.journal, bat.journal) {
		t.Errorf("undo journals differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.journal, "\n"), strings.Join(bat.journal, "\n"))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "h", "f")); err != nil || string(b) != "h\n" {
		t.Errorf("the last step's file: %q, %v", b, err)
	}
	// The batched safe step ran on a confined thread: no new privileges,
	// a seccomp filter.
	var confined bool
	for _, e := range bat.events {
		confined = confined || strings.Contains(e, `"event":"step"`) && strings.Contains(e, `NoNewPrivs:\t1`) && strings.Contains(e, `Seccomp:\t2`)
	}
	if !confined {
		t.Errorf("the batched safe step did not run confined:\n%s", strings.Join(bat.events, "\n"))
	}
}

// TestLocalBatchStepFails: step 2 failing stops the steps after it in
// the batch as a step at a time does: the same events and summary, no
// file; their audit lines before the run are followed by ones that say
// they did not run.
func TestLocalBatchStepFails(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	seq := runLocalBatch(t, localBatchPlan(dir, "exit 3"), true)
	bat := runLocalBatch(t, localBatchPlan(dir, "exit 3"), false)
	for _, r := range []batchRun{seq, bat} {
		if r.sum.Success || r.sum.Steps != 2 || r.sum.Failed == nil || r.sum.Failed.Step != 2 {
			t.Errorf("summary %+v, want failed at step 2", r.sum)
		}
	}
	if !slices.Equal(steady(seq.events), steady(bat.events)) {
		t.Errorf("events differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.events, "\n"), strings.Join(bat.events, "\n"))
	}
	if _, err := os.Stat(filepath.Join(dir, "h")); err == nil {
		t.Error("step 4 ran after step 2 failed")
	}
	if got, want := strings.Join(decisions(bat.audit), " "), "started started started started allowed allowed skipped skipped"; got != want {
		t.Errorf("batched audit decisions %q, want %q", got, want)
	}
	if last := bat.audit[len(bat.audit)-1]; !strings.Contains(last, "not run: step 2 failed") {
		t.Errorf("step 4's last audit line: %s", last)
	}
	if got := strings.Join(decisions(seq.audit), " "); got != "started allowed started allowed" {
		t.Errorf("sequential audit decisions %q", got)
	}
}
