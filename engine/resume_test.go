package engine

import (
	"testing"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/session"
)

// TestPlanPointOf: where a plan resumes, from the record of one host.
func TestPlanPointOf(t *testing.T) {
	plan := &planner.Plan{Phases: []planner.Phase{
		{Phase: 1, Steps: []planner.Step{{Tool: "a"}, {Tool: "b", IgnoreErrors: true}}},
		{Phase: 2, Steps: []planner.Step{{Tool: "c"}, {Tool: "d"}}},
	}}
	rec := func(r string, step int, status string, interrupted bool) session.Record {
		return session.Record{R: r, Host: "h", Step: step, Status: status, Interrupted: interrupted}
	}
	start := session.Record{R: session.RecStart, Start: &session.Start{Kind: session.KindRun}}
	for _, tc := range []struct {
		name    string
		recs    []session.Record
		from    int
		unknown bool
	}{
		{"nothing ran", nil, 1, false},
		{"killed in step 1", []session.Record{rec(session.RecStepStart, 1, "", false)}, 1, true},
		{"ignored failure, then killed between steps", []session.Record{
			rec(session.RecStepStart, 1, "", false), rec(session.RecStep, 1, "ok", false),
			rec(session.RecStepStart, 2, "", false), rec(session.RecStep, 2, "error", false)}, 3, false},
		{"a failed step runs again", []session.Record{
			rec(session.RecStep, 1, "ok", false), rec(session.RecStep, 2, "ok", false),
			rec(session.RecStepStart, 3, "", false), rec(session.RecStep, 3, "error", false)}, 3, false},
		{"a denied step runs again", []session.Record{rec(session.RecStep, 1, "denied", false)}, 1, false},
		{"skipped counts as done", []session.Record{rec(session.RecStep, 1, "skipped", false)}, 2, false},
		{"interrupted (Ctrl-C) is unknown", []session.Record{
			rec(session.RecStep, 1, "ok", false), rec(session.RecStepStart, 2, "", false), rec(session.RecStep, 2, "error", true)}, 2, true},
		{"all done", []session.Record{
			rec(session.RecStep, 1, "ok", false), rec(session.RecStep, 2, "ok", false),
			rec(session.RecStep, 3, "ok", false), rec(session.RecStep, 4, "skipped", false)}, 5, false},
		{"resumed: a later start of step 3 supersedes its end", []session.Record{
			rec(session.RecStep, 1, "ok", false), rec(session.RecStep, 2, "ok", false), rec(session.RecStep, 3, "error", false),
			{R: session.RecResume}, rec(session.RecStepStart, 3, "", false)}, 3, true},
	} {
		s := session.Build("x", append([]session.Record{start}, tc.recs...))
		pt := PlanPointOf(s, "h", plan)
		if pt.From != tc.from || (pt.Unknown != nil) != tc.unknown || len(pt.Done) != tc.from-1 {
			t.Errorf("%s: from %d unknown %v done %d, want from %d unknown %v", tc.name, pt.From, pt.Unknown != nil, len(pt.Done), tc.from, tc.unknown)
		}
	}
}

// TestPlanFrom: the steps before from are dropped, and phases left empty.
func TestPlanFrom(t *testing.T) {
	plan := &planner.Plan{Name: "p", Phases: []planner.Phase{
		{Phase: 1, Steps: []planner.Step{{Tool: "a"}, {Tool: "b"}}},
		{Phase: 2, Steps: []planner.Step{{Tool: "c"}}},
	}}
	got := planFrom(plan, 3)
	if len(got.Phases) != 1 || got.Phases[0].Phase != 2 || len(got.Phases[0].Steps) != 1 || len(plan.Phases[0].Steps) != 2 {
		t.Errorf("planFrom 3: %+v (plan %+v)", got, plan)
	}
	if got := planFrom(plan, 1); len(got.Steps()) != 3 {
		t.Errorf("planFrom 1: %+v", got)
	}
}
