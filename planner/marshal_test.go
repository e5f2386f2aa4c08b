package planner

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

func roundTrip(t *testing.T, p *Plan) *Plan {
	t.Helper()
	out, err := Marshal(p)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse(bytes.NewReader(out), "plan.yaml")
	if err != nil {
		t.Fatalf("Parse of Marshal's output: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(withoutLines(back), withoutLines(p)) {
		t.Errorf("round trip changed the plan:\n%#v\n%#v\n%s", p, back, out)
	}
	return back
}

func TestRoundTrip(t *testing.T) {
	for _, src := range []string{
		`name: single
vars: {a: "1", b: "true", c: "", d: "multi\nline", e: "x: y"}
steps:
  - tool: execute_command
    description: "it's: tricky # not a comment"
    parameters:
      command: |
        echo 1
          indented
      timeout: 30
      ratio: 1.0
      big: 1e300
      neg: -0.5
      huge: 18446744073709551615
      when: 2024-01-01
      flags: [true, false, null, "yes", "1", "", '{{x}}']
      nested: {a: {b: [[], {}]}, "": empty key, "<<": not a merge}
    save_output_as: out
    condition: "out.strip() == '1'"
  - tool: check_condition
    parameters: {condition: "True"}
`,
		`phases:
  - goal: first
    description: d
    success_criteria: s
    steps: [{tool: a}]
  - phase: 2
    goal: second
    steps: [{tool: b, parameters: {x: "  leading and trailing  "}}]
`,
	} {
		p := mustParse(t, src)
		roundTrip(t, p)
	}
	for _, name := range []string{"fix-script", "log-errors", "flip-flag"} {
		p, err := ParseFile("../examples/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, p)
	}
}

func TestMarshalProgrammatic(t *testing.T) {
	// An LLM session's plan: a phase closed without steps is left out,
	// floats stay floats, numbers are renumbered.
	p := &Plan{Phases: []Phase{
		{Phase: 1, Goal: "look", Steps: []Step{{Tool: "ps", Parameters: map[string]any{"n": 2.0, "m": float32(0.5)}}}},
		{Phase: 2, Goal: "think"},
		{Phase: 3, Goal: "act", Steps: []Step{{Tool: "execute_command", Parameters: map[string]any{}, Line: 7}}},
	}}
	out, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, string(out))
	if len(back.Phases) != 2 || back.Phases[1].Phase != 2 || back.Phases[1].Goal != "act" ||
		back.Phases[0].Steps[0].Parameters["n"] != 2.0 || back.Phases[1].Steps[0].Parameters != nil {
		t.Errorf("Marshal:\n%s", out)
	}
	for _, bad := range []*Plan{
		{},
		{Phases: []Phase{{Goal: "a", Steps: []Step{{Tool: "x"}}}, {Steps: []Step{{Tool: "y"}}}}},
		{Phases: []Phase{{Steps: []Step{{Tool: "x", Parameters: map[string]any{"f": math.Inf(1)}}}}}},
		{Phases: []Phase{{Steps: []Step{{Tool: "x", Description: "\xff"}}}}},
		{Phases: []Phase{{Steps: []Step{{}}}}},
	} {
		if out, err := Marshal(bad); err == nil {
			t.Errorf("Marshal(%+v) = %s, want an error", bad, out)
		}
	}
	if out, _ := Marshal(&Plan{Phases: []Phase{{Phase: 1, Steps: []Step{{Tool: "x"}}}}}); !strings.HasPrefix(string(out), "steps:\n") {
		t.Errorf("one phase without a goal: %s", out)
	}
}
