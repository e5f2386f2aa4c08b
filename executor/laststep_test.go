package executor

import (
	"context"
	"sync"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// lastStepRecorder notes, for each command run through it, whether its
// context marks a plan's last step (transport.WithLastStep).
type lastStepRecorder struct {
	transport.Transport
	mu   sync.Mutex
	last map[string]bool
}

func (r *lastStepRecorder) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	r.mu.Lock()
	r.last[cmd.Command] = transport.IsLastStep(ctx)
	r.mu.Unlock()
	return r.Transport.Run(ctx, cmd)
}

// RunPlan marks the plan's last step, and only it, as the last step on
// its transport: the SSH worker then starts no shell ahead after it.
func TestRunPlanMarksLastStep(t *testing.T) {
	h := newHarness(t)
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	rec := &lastStepRecorder{Transport: tr, last: map[string]bool{}}
	e := New(Config{
		Transport: rec, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeNever, nil),
		Audit: h.audit, Journal: h.jrnl, Session: "s1", Vars: execctx.New(),
	})
	step := func(c string) planner.Step {
		return planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": c}}
	}
	plan := &planner.Plan{Phases: []planner.Phase{
		{Phase: 1, Steps: []planner.Step{step("echo one"), step("echo two")}},
		{Phase: 2, Steps: []planner.Step{step("echo three"), step("echo four")}},
	}}
	sum, err := e.RunPlan(context.Background(), plan)
	if err != nil || !sum.Success {
		t.Fatalf("RunPlan: %+v %v", sum, err)
	}
	want := map[string]bool{"echo one": false, "echo two": false, "echo three": false, "echo four": true}
	for c, w := range want {
		got, ran := rec.last[c]
		if !ran || got != w {
			t.Errorf("%q: ran %v, marked last %v, want %v", c, ran, got, w)
		}
	}
}
