package stepgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport/local"
)

// fixture runs tasks locally in a temporary directory against a scripted
// model.
type fixture struct {
	t      *testing.T
	dir    string
	srv    *testenv.LLMServer
	events []event.Event
	mode   safety.Mode
	// sendSecrets is Config.SendSecrets.
	sendSecrets bool
}

func newFixture(t *testing.T, replies ...testenv.Reply) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), srv: testenv.StartLLMServer(t, replies...), mode: safety.ModeMedium}
	t.Cleanup(func() { f.srv.CheckNoRejections(t) })
	return f
}

// q quotes the fixture's directory into JSON arguments: DIR → the path.
func (f *fixture) q(args string) string { return strings.ReplaceAll(args, "DIR", f.dir) }

func (f *fixture) write(name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

// output runs a script of the fixture's directory.
func (f *fixture) output(name string) string {
	f.t.Helper()
	out, err := exec.Command("sh", filepath.Join(f.dir, name)).Output()
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) run(mode Mode, maxSteps int, task string, retries int) (Result, error) {
	f.t.Helper()
	tr, err := local.New()
	if err != nil {
		f.t.Fatal(err)
	}
	emit := func(ev event.Event) { f.events = append(f.events, ev) }
	ex := executor.New(executor.Config{
		Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(f.mode, nil), Emit: emit,
	})
	client := llm.New(llm.Config{BaseURL: f.srv.URL, Model: "gpt-4o-mini", APIKey: "k", MaxRetries: retries},
		llm.WithSleep(func(context.Context, time.Duration) error { return nil }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, Config{LLM: client, Executor: ex, Mode: mode, Transport: tr, MaxSteps: maxSteps, Host: "local", Emit: emit, SendSecrets: f.sendSecrets}, task)
}

// toolReplies returns the content of every tool message the server
// received in request i.
func (f *fixture) toolReplies(i int) []string {
	reqs := f.srv.Requests()
	if i >= len(reqs) {
		f.t.Fatalf("request %d not sent (%d requests)", i, len(reqs))
	}
	var out []string
	for _, m := range reqs[i].Request.Messages {
		if m.Role == "tool" {
			out = append(out, m.Text())
		}
	}
	return out
}

func (f *fixture) lastDone() *event.Done {
	for i := len(f.events) - 1; i >= 0; i-- {
		if f.events[i].Kind == event.KindDone {
			return f.events[i].Done
		}
	}
	f.t.Fatal("no done event")
	return nil
}

const twoPhases = `{"task_type":"file_edit","complexity":"simple","phases":[` +
	`{"phase":1,"goal":"run the script","success_criteria":"its output is known"},` +
	`{"phase":2,"goal":"make it print 2 if it printed 1","success_criteria":"it prints 2"}]}`

// scriptFix is the adaptive-execution spec's conditional fix, adaptive.
func scriptFix(f *fixture) []testenv.Reply {
	return []testenv.Reply{
		testenv.Calls(testenv.Call("submit_plan", twoPhases)),
		testenv.Calls(testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh","save_output_as":"script_output","description":"run it"}`))),
		testenv.Text("The script printed its output."),
		testenv.Calls(
			testenv.Call("edit_file", f.q(`{"file_path":"DIR/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"script_output.strip() == '1'"}`)),
			testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh"}`))),
		testenv.Text("Done."),
	}
}

func TestAdaptiveScriptFix(t *testing.T) {
	for _, tc := range []struct {
		prints, want string
		edited       bool
	}{{"1", "2", true}, {"3", "3", false}} {
		t.Run("prints"+tc.prints, func(t *testing.T) {
			f := newFixture(t)
			f.srv.Push(scriptFix(f)...)
			f.write("a.sh", "#!/bin/sh\necho "+tc.prints+"\n")
			res, err := f.run(ModeAdaptive, 0, "run a.sh; if it prints 1, change it to print 2", 0)
			if err != nil || !res.Success {
				t.Fatalf("Run: %v, %+v", err, res.Summary)
			}
			if got := f.output("a.sh"); got != tc.want {
				t.Errorf("a.sh prints %q, want %q", got, tc.want)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 5 {
				t.Fatalf("%d requests, want 5", len(reqs))
			}
			// the planning request offers submit_plan, and the first
			// phase's tools (issue 17), in the step requests' order
			if names := reqs[0].Request.ToolNames(); len(names) == 0 || !slicesContains(names, "submit_plan") || !slicesContains(names, PhaseDoneName) ||
				!slices.Equal(names, reqs[1].Request.ToolNames()) {
				t.Errorf("planning request tools = %v, step request tools %v", names, reqs[1].Request.ToolNames())
			}
			sys := reqs[1].Request.Messages[0].Text()
			for _, want := range []string{"os: ", "containers: ", "cwd: ", "run a.sh;"} {
				if !strings.Contains(sys, want) {
					t.Errorf("phase prompt lacks %q:\n%s", want, sys)
				}
			}
			if user := reqs[1].Request.Messages[1].Text(); !strings.HasPrefix(user, "Do phase 1: run the script") || !strings.Contains(user, "\nSuccess criteria: its output is known") ||
				strings.Contains(sys, "its output is known") {
				t.Errorf("the phase is said in the user message %q, and only there:\n%s", user, sys)
			}
			// phase 2's first request starts afresh: no tool messages, and the
			// summary carries phase 1's result and variable.
			if got := f.toolReplies(3); len(got) != 0 {
				t.Errorf("phase 2 opened with tool messages %q", got)
			}
			if sys := reqs[3].Request.Messages[0].Text(); !strings.Contains(sys, "script_output") {
				t.Errorf("phase 2 prompt lacks the variable:\n%s", sys)
			}
			replies := f.toolReplies(4)
			if len(replies) != 2 {
				t.Fatalf("tool replies %q, want 2", replies)
			}
			if tc.edited && replies[1] != "2\n" || !tc.edited && !strings.Contains(replies[0], "[skipped: condition") {
				t.Errorf("tool replies %q", replies)
			}
			if res.Answer != "Done." || res.Usage.Calls != 5 || res.Usage.Prompt == 0 {
				t.Errorf("answer %q usage %+v", res.Answer, res.Usage)
			}
			var plan *event.Plan
			for _, ev := range f.events {
				if ev.Kind == event.KindPlan {
					plan = ev.Plan
				}
			}
			if plan == nil || len(plan.Phases) != 2 || plan.Phases[1].Goal != "make it print 2 if it printed 1" {
				t.Errorf("plan event %+v", plan)
			}
			if d := f.lastDone(); d.Status != "success" {
				t.Errorf("done %+v", d)
			}
		})
	}
}

func TestReActScriptFix(t *testing.T) {
	for _, tc := range []struct{ prints, want string }{{"1", "2"}, {"3", "3"}} {
		t.Run("prints"+tc.prints, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.sh", "#!/bin/sh\necho "+tc.prints+"\n")
			f.srv.Push(
				testenv.Calls(testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh","save_output_as":"out"}`))),
				testenv.Calls(testenv.Call("edit_file", f.q(`{"file_path":"DIR/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"out.strip() == '1'"}`))),
				testenv.Text("finished"))
			res, err := f.run(ModeReAct, 0, "fix a.sh", 0)
			if err != nil || !res.Success || res.Answer != "finished" {
				t.Fatalf("Run: %v, %+v %q", err, res.Summary, res.Answer)
			}
			if got := f.output("a.sh"); got != tc.want {
				t.Errorf("a.sh prints %q, want %q", got, tc.want)
			}
			// one conversation: the last request holds both observations
			if got := f.toolReplies(2); len(got) != 2 || got[0] != tc.prints+"\n" {
				t.Errorf("tool replies %q", got)
			}
			for _, r := range f.srv.Requests() {
				if slicesContains(r.Request.ToolNames(), "submit_plan") {
					t.Error("react mode planned")
				}
			}
		})
	}
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func TestFailedStepThenRecovery(t *testing.T) {
	f := newFixture(t)
	f.write("real.txt", "content\n")
	f.srv.Push(
		testenv.Calls(testenv.Call("execute_command", f.q(`{"command":"cat DIR/missing.txt"}`))),
		testenv.Calls(testenv.Call("read_file", f.q(`{"file_path":"DIR/real.txt"}`))),
		testenv.Text("read it"))
	res, err := f.run(ModeReAct, 0, "show the file", 0)
	if err != nil || !res.Success || res.Errors != 1 || res.OK != 1 {
		t.Fatalf("Run: %v, %+v", err, res.Summary)
	}
	if got := f.toolReplies(1); len(got) != 1 || !strings.Contains(got[0], "[ERROR]") || !strings.Contains(got[0], "[exit code 1]") {
		t.Errorf("failed step observation %q", got)
	}
	if got := f.toolReplies(2); len(got) != 2 || got[1] != "content\n" {
		t.Errorf("observations %q", got)
	}
}

func TestDeniedStepReported(t *testing.T) {
	f := newFixture(t)
	f.mode = safety.ModeNever
	f.write("data.txt", "original\n")
	f.srv.Push(
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"change data.txt"}]}`)),
		testenv.Calls(testenv.Call("write_file", f.q(`{"file_path":"DIR/data.txt","content":"changed\n"}`))),
		testenv.Text("could not: denied"))
	res, err := f.run(ModeAdaptive, 0, "change data.txt", 0)
	if err != nil || res.Success || res.Denied != 1 {
		t.Fatalf("Run: %v, %+v", err, res.Summary)
	}
	if got := f.toolReplies(2); len(got) != 1 || !strings.HasPrefix(got[0], "[denied by safety policy: medium risk") {
		t.Errorf("denied observation %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "data.txt")); string(b) != "original\n" {
		t.Errorf("data.txt = %q", b)
	}
	if d := f.lastDone(); d.Status != "failed" || d.Denied != 1 {
		t.Errorf("done %+v", d)
	}
}

func TestLoopDetected(t *testing.T) {
	f := newFixture(t)
	same := testenv.Calls(testenv.Call("execute_command", `{"command":"echo again"}`))
	f.srv.Push(same, same, same, testenv.Text("unreachable"))
	res, err := f.run(ModeReAct, 0, "loop", 0)
	if !errors.Is(err, ErrLoop) || res.Steps != 2 {
		t.Fatalf("err %v, %+v", err, res.Summary)
	}
	if !strings.Contains(err.Error(), "same step 3 times") || f.srv.Remaining() != 1 {
		t.Errorf("err %v, remaining %d", err, f.srv.Remaining())
	}
	if d := f.lastDone(); d.Status != "failed" || !strings.Contains(d.Summary, "loop detected") {
		t.Errorf("done %+v", d)
	}
}

func TestMaxSteps(t *testing.T) {
	f := newFixture(t)
	var calls []testenv.ToolCall
	for i := range 3 {
		calls = append(calls, testenv.Call("execute_command", fmt.Sprintf(`{"command":"echo %d"}`, i)))
	}
	f.srv.Push(testenv.Calls(calls...), testenv.Text("unreachable"))
	res, err := f.run(ModeReAct, 2, "steps", 0)
	if !errors.Is(err, ErrMaxSteps) || res.Steps != 2 {
		t.Fatalf("err %v, %+v", err, res.Summary)
	}
}

func TestMaxRoundsPerPhase(t *testing.T) {
	f := newFixture(t, testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"}]}`)))
	for i := range DefaultMaxRounds {
		f.srv.Push(testenv.Calls(testenv.Call("execute_command", fmt.Sprintf(`{"command":"echo %d"}`, i))))
	}
	_, err := f.run(ModeAdaptive, 0, "forever", 0)
	if !errors.Is(err, ErrMaxRounds) {
		t.Fatalf("err %v", err)
	}
}

// Problem calls (unknown tool, more than 3) get a tool error each, the
// others run, and the history stays valid.
func TestProblemCallsAnswered(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		testenv.Calls(
			testenv.Call("execute_command", `{"command":"echo 1"}`),
			testenv.Call("run_shell", `{"command":"echo 2"}`),
			testenv.Call("execute_command", `{"command":"echo 3","save_output_as":42}`),
			testenv.Call("execute_command", `{"command":"echo 4"}`)),
		testenv.Text("ok"))
	res, err := f.run(ModeReAct, 0, "problems", 0)
	if err != nil || res.Steps != 1 {
		t.Fatalf("Run: %v, %+v", err, res.Summary)
	}
	got := f.toolReplies(1)
	if len(got) != 4 || got[0] != "1\n" || !strings.Contains(got[1], `no tool named "run_shell"`) ||
		!strings.Contains(got[2], "save_output_as") || !strings.Contains(got[3], "At most 3") {
		t.Errorf("tool replies %q", got)
	}
}

// Quirks end to end: calls written in the text, arguments as an object.
func TestQuirks(t *testing.T) {
	f := newFixture(t)
	f.write("a.sh", "#!/bin/sh\necho 1\n")
	inText := testenv.Calls(testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh","save_output_as":"out"}`)))
	inText.Quirks = testenv.QuirkCallsInFencedJSON
	asObject := testenv.Calls(testenv.Call("edit_file", f.q(`{"file_path":"DIR/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"out.strip() == '1'"}`)))
	asObject.Quirks = testenv.QuirkArgumentsObject | testenv.QuirkMissingIDs
	f.srv.Push(inText, asObject, testenv.Reply{Content: "<think>all good</think>done"})
	res, err := f.run(ModeReAct, 0, "fix", 0)
	if err != nil || !res.Success || res.OK != 2 {
		t.Fatalf("Run: %v, %+v", err, res.Summary)
	}
	if got := f.output("a.sh"); got != "2" {
		t.Errorf("a.sh prints %q", got)
	}
}

func TestRateLimitedThenSuccess(t *testing.T) {
	f := newFixture(t, testenv.RateLimited(10*time.Millisecond), testenv.Text("nothing to do"))
	res, err := f.run(ModeReAct, 0, "hi", 3)
	if err != nil || !res.Success || res.Usage.Calls != 1 {
		t.Fatalf("Run: %v, %+v %+v", err, res.Summary, res.Usage)
	}
}

func TestPersistentServerError(t *testing.T) {
	f := newFixture(t, testenv.ErrorReply(500, ""), testenv.ErrorReply(500, ""))
	_, err := f.run(ModeAdaptive, 0, "hi", 1)
	if !errors.Is(err, llm.ErrExhausted) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err %v", err)
	}
	if d := f.lastDone(); d.Status != "failed" {
		t.Errorf("done %+v", d)
	}
}

// The planner falls back to one phase when the model's plan is unusable
// twice, answering the bad call with a tool error first.
func TestPlanFallback(t *testing.T) {
	f := newFixture(t,
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[]}`)),
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1}]}`)),
		testenv.Text("nothing to do"))
	res, err := f.run(ModeAdaptive, 0, "the task", 0)
	if err != nil || !res.Success || len(res.Plan.Phases) != 1 || res.Plan.Phases[0].Goal != "the task" {
		t.Fatalf("Run: %v, %+v %+v", err, res.Summary, res.Plan)
	}
	if got := f.toolReplies(1); len(got) != 1 || !strings.Contains(got[0], "no phases") {
		t.Errorf("plan tool error %q", got)
	}
}

func TestToStep(t *testing.T) {
	st, err := toStep(llm.ToolCall{Name: "check_condition", Arguments: json.RawMessage(`{"condition":"x == 1","description":"d","save_output_as":"ok"}`)})
	if err != nil || st.Condition != "" || st.Parameters["condition"] != "x == 1" || st.Description != "d" || st.SaveOutputAs != "ok" {
		t.Errorf("check_condition step %+v, %v", st, err)
	}
	st, err = toStep(llm.ToolCall{Name: "execute_command", Arguments: json.RawMessage(`{"command":"ls","condition":"x == 1"}`)})
	if err != nil || st.Condition != "x == 1" || len(st.Parameters) != 1 {
		t.Errorf("step %+v, %v", st, err)
	}
	if _, err := toStep(llm.ToolCall{Name: "execute_command", Arguments: json.RawMessage(`{"command":"ls","save_output_as":"last"}`)}); err == nil {
		t.Error("reserved variable name accepted")
	}
}

func TestLoopDetector(t *testing.T) {
	var d loopDetector
	p := map[string]any{"command": "ls"}
	if d.observe("x", p) || d.observe("x", p) || d.observe("x", map[string]any{"command": "pwd"}) || d.observe("x", p) || d.observe("x", p) {
		t.Fatal("loop too early")
	}
	if !d.observe("x", p) {
		t.Fatal("third repeat not detected")
	}
}
