package planner

import (
	"context"
	"strings"
	"testing"

	execctx "github.com/autoshell/agent/context"
	"github.com/autoshell/agent/safety"
)

// ignore_errors reads, validates and writes back; a bad value is an error.
func TestIgnoreErrorsParse(t *testing.T) {
	p := mustParse(t, "steps:\n  - tool: execute_command\n    parameters: {command: grep ERROR log}\n    save_output_as: errs\n    ignore_errors: true\n  - tool: execute_command\n    parameters: {command: echo ok}\n    ignore_errors: false\n")
	st := p.Steps()
	if !st[0].IgnoreErrors || st[1].IgnoreErrors {
		t.Fatalf("IgnoreErrors = %v, %v", st[0].IgnoreErrors, st[1].IgnoreErrors)
	}
	back := roundTrip(t, p)
	if !back.Steps()[0].IgnoreErrors {
		t.Error("ignore_errors lost in the round trip")
	}
	out, err := Marshal(p)
	if err != nil || !strings.Contains(string(out), "ignore_errors: true") || strings.Contains(string(out), "ignore_errors: false") {
		t.Errorf("Marshal: %v\n%s", err, out)
	}
	for src, want := range map[string]string{
		"steps:\n  - tool: execute_command\n    parameters: {command: x}\n    ignore_errors: yes please\n": "`ignore_errors` must be true or false",
		"steps:\n  - tool: execute_command\n    parameters: {command: x}\n    ignore_errors: [true]\n":     "`ignore_errors` must be true or false",
		"steps:\n  - tool: execute_command\n    parameters: {command: x, ignore_errors: true}\n":           "belongs at the step level",
	} {
		_, err := Parse(strings.NewReader(src), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
}

// A failed step marked ignore_errors is recorded as failed, its output is
// saved, and the run goes on to succeed; without the mark it stops there.
func TestExecutorIgnoreErrors(t *testing.T) {
	h := newHarness(t)
	log := h.write("app.log", "all good\n")
	steps := func(ignore bool) *Plan {
		return &Plan{Phases: []Phase{{Phase: 1, Steps: []Step{
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
