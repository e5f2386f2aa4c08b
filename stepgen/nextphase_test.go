package stepgen

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// A reply may go on with the next phase's steps after an honoured
// phase_done (issue 31 §3): the planning reply does two phases here, in
// one request, and each step runs in its own phase.
func TestAdaptiveStepsAfterPhaseDone(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(testenv.Calls(
		testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"make a"},{"phase":2,"goal":"make b"}]}`),
		testenv.Call("write_file", f.q(`{"file_path":"DIR/a","content":"a"}`)),
		testenv.Call("phase_done", `{"summary":"a made"}`),
		testenv.Call("write_file", f.q(`{"file_path":"DIR/b","content":"{{last.success}}"}`)),
		testenv.Call("phase_done", `{"summary":"b made"}`)))
	res, err := f.run(ModeAdaptive, 0, "make a, then b", 0)
	if err != nil || !res.Success || res.Answer != "b made" {
		t.Fatalf("Run: %v %q %+v", err, res.Answer, res.Summary)
	}
	if n := len(f.srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if !f.exists("a") || !f.exists("b") || len(res.Ran) != 2 || res.Ran[0].Phase.Phase != 1 || res.Ran[1].Phase.Phase != 2 {
		t.Errorf("ran %+v", res.Ran)
	}
}

// Steps after a phase_done that is not honoured do not run: they are
// answered, and the phase goes on.
func TestAdaptiveStepsAfterPhaseDoneNotHonoured(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"},{"phase":2,"goal":"h"}]}`)),
		testenv.Calls(
			testenv.Call("execute_command", `{"command":"exit 3"}`),
			testenv.Call("phase_done", `{"summary":"g done"}`),
			testenv.Call("write_file", f.q(`{"file_path":"DIR/b","content":"b"}`)),
			testenv.Call("phase_done", `{"summary":"h done"}`)),
		testenv.Calls(testenv.Call("phase_done", `{"summary":"g done after all"}`)),
		testenv.Calls(testenv.Call("phase_done", `{"summary":"h done"}`)))
	res, err := f.run(ModeAdaptive, 0, "t", 0)
	if err != nil || res.Answer != "h done" {
		t.Fatalf("Run: %v %q", err, res.Answer)
	}
	if f.exists("b") || res.Steps != 1 {
		t.Errorf("the next phase's step ran (%d steps)", res.Steps)
	}
	got := f.toolReplies(2)
	if len(got) != 4 || !strings.Contains(got[1], "not done") || !strings.Contains(got[2], "next phase has not begun") ||
		!strings.Contains(got[3], "next phase has not begun") {
		t.Errorf("tool replies %q", got)
	}
}
