package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// A failed step marked ignore_errors is recorded as failed, its output is
// saved, and the run goes on to succeed; without the mark it stops there.
func TestExecutorIgnoreErrors(t *testing.T) {
	h := newHarness(t)
	log := h.write("app.log", "all good\n")
	steps := func(ignore bool) *planner.Plan {
		return &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
			{Tool: "execute_command", Parameters: map[string]any{"command": "grep ERROR " + log}, SaveOutputAs: "errs", IgnoreErrors: ignore},
			{Tool: "execute_command", Parameters: map[string]any{"command": "echo after"}, Condition: "errs == ''"},
		}}}}
	}
	sum, err := h.executor(safety.ModeNever, false, nil).RunPlan(context.Background(), steps(false))
	if err != nil || sum.Success || sum.Steps != 1 || sum.Failed == nil {
		t.Fatalf("without ignore_errors: %+v %v", sum, err)
	}
	h2 := newHarness(t)
	log = h2.write("app.log", "all good\n")
	sum, err = h2.executor(safety.ModeNever, false, nil).RunPlan(context.Background(), steps(true))
	if err != nil || !sum.Success || sum.Steps != 2 || sum.Errors != 1 || sum.OK != 1 || sum.Ignored != 1 || sum.Failed != nil {
		t.Fatalf("with ignore_errors: %+v %v", sum, err)
	}
	if !strings.Contains(sum.Text(), "1 failure ignored") {
		t.Errorf("summary %q", sum.Text())
	}
	evs := h2.steps()
	if len(evs) != 2 || evs[0].Status != string(execctx.StatusError) || evs[1].Status != string(execctx.StatusOK) {
		t.Errorf("step events: %+v", evs)
	}
}
