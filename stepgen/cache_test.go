package stepgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// promptOf is a request body's prompt in the order providers cache it:
// the tools, then the messages.
func promptOf(t *testing.T, body []byte) []byte {
	t.Helper()
	var req struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(req.Tools)
	for _, m := range req.Messages {
		out = append(out, m...)
	}
	return out
}

func commonLen(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Issue 31 §3: every request of an adaptive run begins with what an
// earlier one sent, so that a provider's prompt cache serves it: the
// planning request and the step requests share their tools, rules,
// environment and task; a phase's request repeats the previous phase's
// request up to the end of its steps.
func TestAdaptivePromptPrefixStable(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		testenv.Calls(
			testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"one"},{"phase":2,"goal":"two"},{"phase":3,"goal":"three"}]}`),
			testenv.Call("execute_command", `{"command":"echo first-output","save_output_as":"a"}`),
			testenv.Call("phase_done", `{"summary":"one done"}`)),
		testenv.Calls(
			testenv.Call("execute_command", `{"command":"echo second-output","save_output_as":"b"}`),
			testenv.Call("phase_done", `{"summary":"two done"}`)),
		testenv.Calls(
			testenv.Call("execute_command", `{"command":"echo third-output"}`),
			testenv.Call("phase_done", `{"summary":"three done"}`)))
	if _, err := f.run(ModeAdaptive, 0, "echo three things", 0); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	p := make([][]byte, len(reqs))
	for i, r := range reqs {
		p[i] = promptOf(t, r.Body)
	}
	// the planning request and phase 2's: the tools and the system
	// prompt up to the task
	sys0 := reqs[0].Request.Messages[0].Text()
	task := strings.Index(sys0, "## Task\necho three things\n")
	if task < 0 {
		t.Fatalf("planning prompt lacks the task:\n%s", sys0)
	}
	head := len(p[0]) - len(p[0][bytes.Index(p[0], []byte(`{"role":"system"`)):]) + len(`{"role":"system","content":"`) + task
	if n := commonLen(p[0], p[1]); n < head {
		t.Errorf("planning and phase 2 requests share %d bytes, want ≥ %d (tools, rules, environment, task): they part at %q",
			n, head, p[1][n:min(n+80, len(p[1]))])
	}
	// phase 2's request and phase 3's: up to the end of phase 2's steps
	sys1 := reqs[1].Request.Messages[0].Text()
	end := strings.Index(sys1, "first-output\n")
	if end < 0 {
		t.Fatalf("phase 2 prompt lacks phase 1's step:\n%s", sys1)
	}
	at := bytes.Index(p[1], []byte("first-output\\n"))
	if n := commonLen(p[1], p[2]); n < at {
		t.Errorf("phase 2 and 3 requests share %d bytes, want ≥ %d (through phase 1's step): they part at %q",
			n, at, p[2][n:min(n+80, len(p[2]))])
	}
	// the output a variable holds is sent once: in the step's entry,
	// which names the variable; the variables block does not repeat it
	if sys := reqs[2].Request.Messages[0].Text(); strings.Count(sys, "second-output\n") != 1 || !strings.Contains(sys, "saved as: b\n") ||
		strings.Contains(sys, "\n  b = ") {
		t.Errorf("phase 3's prompt does not hold phase 2's output once:\n%s", sys)
	}
	// a phase's closing text follows its last step, so that it is part of
	// the prefix the next phase's request repeats
	if sys := reqs[2].Request.Messages[0].Text(); !strings.Contains(sys, "first-output\nPhase 1: one done\n2. execute_command [ok") ||
		strings.Contains(sys, "## Phases done") {
		t.Errorf("phase 3's prompt does not put phase 1's summary after its step:\n%s", sys)
	}
	if at := bytes.Index(p[1], []byte("Phase 1: one done\\n")); at < 0 || commonLen(p[1], p[2]) < at {
		t.Errorf("phase 2 and 3 requests do not share phase 1's summary (at %d, %d bytes shared)", at, commonLen(p[1], p[2]))
	}
	// and the plan, which only a replan changes, comes before the steps:
	// phase 2's and 3's requests share it
	sys2 := reqs[2].Request.Messages[0].Text()
	if i, j := strings.Index(sys2, "## Plan\n1. one\n"), strings.Index(sys2, "## Steps run\n"); i < 0 || j < i {
		t.Errorf("phase 3's prompt does not put the plan before the steps:\n%s", sys2)
	}
}

// A phase that cannot succeed can be closed with REPLAN: and the new plan
// in the same reply: no request to the planner follows (issue 31 §3). A
// submit_plan beside anything else is refused and the phase goes on.
func TestAdaptiveReplanInPhase(t *testing.T) {
	f := newFixture(t,
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"},{"phase":2,"goal":"never"}]}`)),
		testenv.Calls(
			testenv.Call("execute_command", `{"command":"true"}`),
			testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"too early"}]}`)),
		testenv.Calls(
			testenv.Call("phase_done", `{"summary":"REPLAN: wrong approach"}`),
			testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"h"}]}`)),
		testenv.Calls(testenv.Call("phase_done", `{"summary":"h done"}`)))
	res, err := f.run(ModeAdaptive, 0, "t", 0)
	if err != nil || res.Answer != "h done" {
		t.Fatalf("Run: %v %q", err, res.Answer)
	}
	if got := f.toolReplies(2); len(got) != 2 || !strings.Contains(got[1], "not used") {
		t.Errorf("submit_plan without REPLAN: answered %q", got)
	}
	if n := len(f.srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 (plan, two rounds of phase 1, phase h)", n)
	}
	var goals []string
	for _, ph := range res.Plan.Phases {
		goals = append(goals, ph.Goal)
	}
	if strings.Join(goals, ",") != "g,h" || res.Plan.Phases[1].Phase != 2 {
		t.Errorf("plan after the replan: %+v", res.Plan.Phases)
	}
	sys := f.srv.Requests()[3].Request.Messages[0].Text()
	user := f.srv.Requests()[3].Request.Messages[1].Text()
	if !strings.Contains(sys, "Phase 1 could not succeed: wrong approach") || !strings.HasPrefix(user, "Do phase 2: h") {
		t.Errorf("the new phase's prompt:\n%s\nuser: %s", sys, user)
	}
}

// A REPLAN: with an unusable plan beside it falls back to asking the
// planner.
func TestAdaptiveReplanInPhaseBadPlan(t *testing.T) {
	f := newFixture(t,
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"g"}]}`)),
		testenv.Calls(
			testenv.Call("phase_done", `{"summary":"REPLAN: wrong approach"}`),
			testenv.Call("submit_plan", `{"phases":[]}`)),
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"h"}]}`)),
		testenv.Calls(testenv.Call("phase_done", `{"summary":"h done"}`)))
	res, err := f.run(ModeAdaptive, 0, "t", 0)
	if err != nil || res.Answer != "h done" || len(f.srv.Requests()) != 4 {
		t.Fatalf("Run: %v %q, %d requests", err, res.Answer, len(f.srv.Requests()))
	}
	if names := f.srv.Requests()[2].Request.ToolNames(); len(names) != 1 || names[0] != "submit_plan" {
		t.Errorf("request 3 offers %v, want the planner's submit_plan", names)
	}
}

// withNotes puts a phase's closing text after its last step entry: before
// the first entry numbered above it, or at the end; the entries stay as
// they are.
func TestWithNotes(t *testing.T) {
	steps := "  … 2 earlier steps not shown\n3. read_file [ok]: x → y\n4. execute_command [ok, exit 0, 1ms]\n   parameters: {\"command\":\"echo 5. no\"}\n" +
		"   output: 6. not an entry\n     7. nor this\n5. write_file [ok]\n"
	notes := []phaseNote{{"Phase 1: a", 1}, {"Phase 2: b", 3}, {"Phase 3: c", 4}, {"Phase 4: d", 5}, {"Phase 5: e", 5}}
	want := "  … 2 earlier steps not shown\nPhase 1: a\n3. read_file [ok]: x → y\nPhase 2: b\n4. execute_command [ok, exit 0, 1ms]\n" +
		"   parameters: {\"command\":\"echo 5. no\"}\n   output: 6. not an entry\n     7. nor this\nPhase 3: c\n5. write_file [ok]\nPhase 4: d\nPhase 5: e\n"
	if got := withNotes(steps, notes); got != want {
		t.Errorf("withNotes =\n%s\nwant\n%s", got, want)
	}
	if got := withNotes("", notes[:2]); got != "Phase 1: a\nPhase 2: b\n" {
		t.Errorf("no steps: %q", got)
	}
	if got := withNotes(steps, nil); got != steps {
		t.Errorf("no notes: %q", got)
	}
	for _, line := range []string{"", "12", "12.x", ". x", "1a. x", "   3. x", "99999999999. x"} {
		if n, ok := entryNumber(line); ok {
			t.Errorf("entryNumber(%q) = %d", line, n)
		}
	}
}

func FuzzWithNotes(f *testing.F) {
	f.Add("1. a [ok]\n   output: 2. b\n3. c\n", 1, 2)
	f.Add("", 0, 0)
	f.Fuzz(func(t *testing.T, steps string, a, b int) {
		notes := []phaseNote{{"Phase 1: x", min(a, b)}, {"Phase 2: y", max(a, b)}}
		got := withNotes(steps, notes)
		// every line of steps, in order, and each note once
		rest := got
		for line := range strings.Lines(steps) {
			i := strings.Index(rest, line)
			if i < 0 {
				t.Fatalf("line %q of the steps lost or moved: %q", line, got)
			}
			rest = rest[i+len(line):]
		}
		for _, note := range []string{"Phase 1: x\n", "Phase 2: y\n"} {
			if !strings.HasPrefix(got, note) && !strings.Contains(got, "\n"+note) {
				t.Fatalf("withNotes(%q) = %q: %q not on a line of its own", steps, got, note)
			}
		}
	})
}
