package stepgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// One request per phase (issue 17): the planning reply carries phase 1's
// steps and its phase_done, phase 2's reply its steps and phase_done; the
// task is done in two requests, with conditions and save_output_as, and
// the scripted server (real APIs' rules) accepts every request.
func TestAdaptiveOneRequestPerPhase(t *testing.T) {
	for _, tc := range []struct{ prints, want string }{{"1", "2"}, {"3", "3"}} {
		t.Run("prints"+tc.prints, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.sh", "#!/bin/sh\necho "+tc.prints+"\n")
			f.srv.Push(
				testenv.Calls(
					testenv.Call("submit_plan", twoPhases),
					testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh","save_output_as":"script_output"}`)),
					testenv.Call("phase_done", `{"summary":"ran it"}`)),
				testenv.Calls(
					testenv.Call("edit_file", f.q(`{"file_path":"DIR/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"script_output.strip() == '1'"}`)),
					testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh","save_output_as":"after"}`)),
					testenv.Call("phase_done", `{"summary":"it prints 2 now, or did not print 1"}`)))
			res, err := f.run(ModeAdaptive, 0, "run a.sh; if it prints 1, change it to print 2", 0)
			if err != nil || !res.Success {
				t.Fatalf("Run: %v, %+v", err, res.Summary)
			}
			if got := f.output("a.sh"); got != tc.want {
				t.Errorf("a.sh prints %q, want %q", got, tc.want)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 2 || res.Usage.Calls != 2 || f.srv.Remaining() != 0 {
				t.Fatalf("%d requests (%d calls), want 2", len(reqs), res.Usage.Calls)
			}
			if !strings.Contains(string(reqs[0].Body), `"tool_choice":"required"`) {
				t.Errorf("planning request does not require a tool call: %s", reqs[0].Body)
			}
			// phase 2 starts afresh, its history holding phase 1's step and
			// summary
			if got := f.toolReplies(1); len(got) != 0 {
				t.Errorf("phase 2 opened with tool messages %q", got)
			}
			sys := reqs[1].Request.Messages[0].Text()
			if !strings.Contains(sys, "script_output") || !strings.Contains(sys, "Phase 1: ran it") {
				t.Errorf("phase 2 prompt lacks phase 1:\n%s", sys)
			}
			if res.Answer != "it prints 2 now, or did not print 1" || res.Steps != 3 {
				t.Errorf("answer %q, %d steps", res.Answer, res.Steps)
			}
			if len(res.Ran) != 3 || res.Ran[0].Phase.Phase != 1 || res.Ran[1].Phase.Phase != 2 {
				t.Errorf("ran %+v", res.Ran)
			}
			if _, err := res.SavedPlan(nil); err != nil {
				t.Errorf("SavedPlan: %v", err)
			}
		})
	}
}

// phase_done is honoured only when every step before it succeeded: a
// failed step, a refused call or a step beyond the third keep the phase
// going, and the model is told why in phase_done's tool reply; a skipped
// step counts as success, and so does a failure the model said it
// expected (ignore_errors); phase_done does not count toward the three.
func TestPhaseDoneOnlyAfterSuccess(t *testing.T) {
	plan := `{"phases":[{"phase":1,"goal":"g"}]}`
	for _, tc := range []struct {
		name  string
		first []testenv.ToolCall
		why   string // in the tool reply to phase_done; "" = honoured
	}{
		{"failed", []testenv.ToolCall{testenv.Call("execute_command", `{"command":"exit 3"}`)}, "call 1 (execute_command) failed"},
		{"unknown", []testenv.ToolCall{testenv.Call("execute_command", `{"command":"true"}`), testenv.Call("run_shell", `{}`)}, "call 2 (run_shell) was not run: unknown tool"},
		{"fourth", []testenv.ToolCall{testenv.Call("execute_command", `{"command":"true"}`), testenv.Call("execute_command", `{"command":"true 2"}`),
			testenv.Call("execute_command", `{"command":"true 3"}`), testenv.Call("execute_command", `{"command":"true 4"}`)}, "call 4 (execute_command) was not run: too many calls"},
		{"badargs", []testenv.ToolCall{testenv.Call("execute_command", `[1]`)}, "call 1 (execute_command) was not run: bad arguments"},
		{"expected failure", []testenv.ToolCall{testenv.Call("execute_command", `{"command":"exit 3","ignore_errors":true}`)}, ""},
		{"ignore_errors not a bool", []testenv.ToolCall{testenv.Call("execute_command", `{"command":"exit 3","ignore_errors":"yes"}`)},
			"call 1 (execute_command) was not run: bad arguments"},
		{"skipped", []testenv.ToolCall{testenv.Call("execute_command", `{"command":"true","condition":"1 == 2"}`),
			testenv.Call("execute_command", `{"command":"true 2"}`), testenv.Call("execute_command", `{"command":"true 3"}`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			calls := append([]testenv.ToolCall{testenv.Call("submit_plan", plan)}, tc.first...)
			calls = append(calls, testenv.Call("phase_done", `{"summary":"early"}`))
			f.srv.Push(testenv.Calls(calls...))
			if tc.why != "" {
				f.srv.Push(testenv.Calls(testenv.Call("phase_done", `{"summary":"later"}`)))
			}
			res, err := f.run(ModeAdaptive, 0, "t", 0)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if f.srv.Remaining() != 0 {
				t.Fatalf("%d replies left", f.srv.Remaining())
			}
			if tc.why == "" {
				if res.Answer != "early" || len(f.srv.Requests()) != 1 {
					t.Errorf("answer %q after %d requests", res.Answer, len(f.srv.Requests()))
				}
				return
			}
			if res.Answer != "later" {
				t.Errorf("answer %q", res.Answer)
			}
			replies := f.toolReplies(1)
			last := replies[len(replies)-1]
			if len(replies) != len(tc.first)+1 || !strings.Contains(last, "not done: the phase goes on") || !strings.Contains(last, tc.why) {
				t.Errorf("tool replies %q, want the last saying %q", replies, tc.why)
			}
			// the next request repeats the planning reply's steps and
			// phase_done, not its submit_plan
			for _, m := range f.srv.Requests()[1].Request.Messages {
				for _, c := range m.ToolCalls {
					if c.Function.Name == "submit_plan" {
						t.Errorf("submit_plan sent back in a phase request")
					}
				}
			}
		})
	}
}

// A planning reply whose plan is refused runs none of its steps: they are
// answered "not run", and the accepted plan's steps run.
func TestPlanRefusedRunsNoStep(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[]}`),
			testenv.Call("execute_command", f.q(`{"command":"touch DIR/early"}`))),
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"}]}`),
			testenv.Call("execute_command", f.q(`{"command":"touch DIR/late"}`)),
			testenv.Call("phase_done", `{"summary":"made it"}`)))
	res, err := f.run(ModeAdaptive, 0, "t", 0)
	if err != nil || res.Answer != "made it" || res.Steps != 1 {
		t.Fatalf("Run: %v %q %+v", err, res.Answer, res.Summary)
	}
	got := f.toolReplies(1)
	if len(got) != 2 || !strings.Contains(got[1], "not run: the plan was not accepted") {
		t.Errorf("tool replies %q", got)
	}
	if f.exists("early") || !f.exists("late") {
		t.Errorf("early ran %v, late ran %v", f.exists("early"), f.exists("late"))
	}
}

// phase_done can say the phase cannot succeed (REPLAN:) or the task
// cannot (FAILED:), as a closing text can.
func TestPhaseDoneMarkers(t *testing.T) {
	f := newFixture(t,
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"}]}`)),
		testenv.Calls(testenv.Call("phase_done", `{"summary":"FAILED: no such host"}`)))
	_, err := f.run(ModeAdaptive, 0, "t", 0)
	if err == nil || !strings.Contains(err.Error(), "no such host") {
		t.Fatalf("Run: %v, want the task failed", err)
	}
	g := newFixture(t,
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"}]}`),
			testenv.Call("phase_done", `{"summary":"REPLAN: wrong approach"}`)),
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"h"}]}`)),
		testenv.Calls(testenv.Call("phase_done", `{"summary":"done"}`)))
	res, err := g.run(ModeAdaptive, 0, "t", 0)
	if err != nil || res.Answer != "done" || len(res.Plan.Phases) != 2 {
		t.Fatalf("Run: %v %q %+v", err, res.Answer, res.Plan)
	}
}

func (f *fixture) exists(name string) bool {
	_, err := os.Stat(filepath.Join(f.dir, name))
	return err == nil
}
