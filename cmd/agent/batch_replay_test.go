package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	execctx "github.com/autoshell/agent/context"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/transport/local"
)

// replayHost opens a hostRun on this machine for replay tests.
func replayHost(t *testing.T) *hostRun {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	out, err := newBatchOutput(a, "", false, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	sink := out.newHostSink("here")
	steps, err := openStepsOn(stepTarget{tr: tr, host: "here", approver: safety.NewApprover(safety.ModeAll, nil), render: sink},
		safety.DefaultPolicy(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(steps.Close)
	return &hostRun{host: inventoryHost{Name: "here"}, steps: steps, exec: planner.NewExecutor(steps.exec), sink: sink}
}

func cmdStep(command, save, cond string) planner.Step {
	return planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": command}, SaveOutputAs: save, Condition: cond}
}

// TestReplayDivergence checks when a host follows the first host's path
// and when it leaves it.
func TestReplayDivergence(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "mark")
	type ran struct {
		st     planner.Step
		status execctx.Status
		value  any // the first host's check_condition answer
	}
	ok, failed, skipped := execctx.StatusOK, execctx.StatusError, execctx.StatusSkipped
	tests := []struct {
		name  string
		ran   []ran
		why   string // "" when the host follows
		steps int    // steps run here
	}{
		{"same statuses, failures included", []ran{
			{cmdStep("echo hi", "x", ""), ok, nil},
			{cmdStep("false", "", ""), failed, nil},
			{cmdStep("echo no", "", "x.strip() == 'zzz'"), skipped, nil},
		}, "", 3},
		{"a step that ran there is skipped by its condition here", []ran{
			{cmdStep("echo hi", "x", ""), ok, nil},
			{cmdStep("echo yes", "", "x.strip() == 'bye'"), ok, nil},
			{cmdStep("echo after", "", ""), ok, nil},
		}, "", 3},
		{"a step skipped there would run here", []ran{
			{cmdStep("echo hi", "x", ""), ok, nil},
			{cmdStep("touch "+mark, "", "x.strip() == 'hi'"), skipped, nil},
		}, "step 2 (execute_command) was skipped on first, but its condition x.strip() == 'hi' is true here", 1},
		{"a step fails here", []ran{
			{cmdStep("echo hi", "", ""), ok, nil},
			{cmdStep("exit 3", "", ""), ok, nil},
			{cmdStep("echo never", "", ""), ok, nil},
		}, "step 2 (execute_command): error here ([exit code 3]), ok on first", 2},
		{"a step succeeds here that failed there", []ran{
			{cmdStep("true", "", ""), failed, nil},
		}, "step 1 (execute_command): ok here", 1},
		{"check_condition answers otherwise", []ran{
			{cmdStep("echo 2", "v", ""), ok, nil},
			{planner.Step{Tool: "check_condition", Parameters: map[string]any{"condition": "v.strip() == '1'"}}, ok, true},
			{cmdStep("echo never", "", ""), ok, nil},
		}, "step 2 (check_condition): false here, true on first", 2},
		{"check_condition answers the same", []ran{
			{cmdStep("echo 1", "v", ""), ok, nil},
			{planner.Step{Tool: "check_condition", Parameters: map[string]any{"condition": "v.strip() == '1'"}}, ok, true},
		}, "", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := replayHost(t)
			first := &firstRun{host: "first"}
			for _, r := range tc.ran {
				first.res.Ran = append(first.res.Ran, stepgen.RanStep{Step: r.st, Status: r.status})
				first.history = append(first.history, execctx.StepRecord{Tool: r.st.Tool, Status: r.status, Value: r.value})
			}
			sum, why, err := replay(context.Background(), h, first)
			if err != nil {
				t.Fatal(err)
			}
			if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q", why, tc.why)
			}
			if sum.Steps != tc.steps {
				t.Errorf("%d steps run, want %d", sum.Steps, tc.steps)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("a step skipped on the first host ran here")
			}
		})
	}
}
