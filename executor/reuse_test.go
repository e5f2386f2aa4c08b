package executor

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// TestConfinedThreadFollowsEndedCommand: on a Restrictor that reuses its
// threads (as agent's local confinement does), a step's command runs on
// the thread of the step before when that step's process group is gone,
// and on a new thread when a process of it lives on in its group.
func TestConfinedThreadFollowsEndedCommand(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("no Landlock")
	}
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	r, err := confine.NewRestrictor(confine.Compile(confine.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Reuse()
	e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeNever, nil), Confiner: threadConfiner{r}})
	step := func(cmd string) {
		t.Helper()
		res, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}})
		if err != nil || res.Status != "ok" {
			t.Fatalf("%s: %s %q %v", cmd, res.Status, res.Observation, err)
		}
	}
	// The rules list nothing: no directory's change moves them.
	step("true")
	step("true")
	if r.Reused() != 1 {
		t.Fatalf("two steps: %d commands on a reused thread, want 1", r.Reused())
	}
	step("sleep 1 &")
	step("true")
	if r.Reused() != 2 {
		t.Fatalf("after a step that left a process: %d reused, want 2 (the background step's own)", r.Reused())
	}
	step("true")
	if r.Reused() != 3 {
		t.Fatalf("%d reused, want 3", r.Reused())
	}
}

// preparing is the local transport counting the commands prepared ahead
// (transport.Preparer) and those run without.
type preparing struct {
	*local.Transport
	prepared, ran atomic.Int32
}

func (p *preparing) Prepare(c transport.Command) func(context.Context) (transport.Result, error) {
	p.prepared.Add(1)
	return p.Transport.Prepare(c)
}

func (p *preparing) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	if b, _ := transport.BatchOf(ctx); b == nil {
		p.ran.Add(1)
	}
	return p.Transport.Run(ctx, c)
}

// TestLocalBatchPrepared: a local batch's commands are prepared when
// their steps are (the environment, the program's path), not on their
// confined thread once the command before ended.
func TestLocalBatchPrepared(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("no Landlock")
	}
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	tr := &preparing{Transport: lt}
	r, err := confine.NewRestrictor(confine.Compile(confine.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Reuse()
	e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeNever, nil), Confiner: threadConfiner{r}})
	var steps []planner.Step
	for range 4 {
		steps = append(steps, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "true"}})
	}
	plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: steps}}}
	sum, err := e.RunPlan(context.Background(), plan)
	if err != nil || !sum.Success || sum.Steps != 4 {
		t.Fatalf("%+v %v", sum, err)
	}
	if tr.prepared.Load() != 4 || tr.ran.Load() != 0 {
		t.Fatalf("%d commands prepared ahead, %d run unprepared; want 4 and 0", tr.prepared.Load(), tr.ran.Load())
	}
}
