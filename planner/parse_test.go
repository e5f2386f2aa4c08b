package planner

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSteps(t *testing.T) {
	p := mustParse(t, `# a comment
name: demo
vars:
  dir: /tmp
  port: 8080
  debug: true
steps:
  - tool: execute_command
    description: list
    parameters:
      command: ls {{dir}}
      timeout: 30
      env: {A: "1", B: [x, 2, 1.5, null, true]}
    save_output_as: listing
  - tool: check_condition
    parameters: {condition: "listing != ''"}
    condition: last.success
`)
	want := &Plan{
		Name:   "demo",
		Vars:   map[string]string{"dir": "/tmp", "port": "8080", "debug": "true"},
		Source: "plan.yaml",
		Phases: []Phase{{Phase: 1, Steps: []Step{
			{Tool: "execute_command", Description: "list", Line: 8, SaveOutputAs: "listing",
				Parameters: map[string]any{"command": "ls {{dir}}", "timeout": 30,
					"env": map[string]any{"A": "1", "B": []any{"x", 2, 1.5, nil, true}}}},
			{Tool: "check_condition", Line: 15, Condition: "last.success",
				Parameters: map[string]any{"condition": "listing != ''"}},
		}}},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Parse =\n%#v\nwant\n%#v", p, want)
	}
}

func TestParsePhases(t *testing.T) {
	p := mustParse(t, `phases:
  - goal: first
    success_criteria: it ran
    steps: [{tool: execute_command, parameters: {command: "true"}}]
  - phase: 2
    goal: second
    description: more
    steps:
      - tool: read_file
        parameters: {file_path: /etc/hostname}
`)
	if len(p.Phases) != 2 || p.Phases[0].Phase != 1 || p.Phases[1].Phase != 2 ||
		p.Phases[0].SuccessCriteria != "it ran" || p.Phases[1].Description != "more" ||
		p.Phases[1].Steps[0].Line != 9 || len(p.Steps()) != 2 {
		t.Errorf("Parse = %+v", p)
	}
}

func TestParseErrors(t *testing.T) {
	const step = "steps:\n  - tool: execute_command\n    parameters: {command: ls}\n"
	tests := []struct {
		name, src string
		want      string // the whole first line of the error, after "bad.yaml:"
	}{
		{"empty", "", "1: the file is empty"},
		{"comments only", "# nothing\n", "1: the file is empty"},
		{"syntax", "steps:\n  - tool: x\n   bad: [\n", "2: YAML syntax: did not find expected '-' indicator (in the list or mapping that starts on this line)"},
		{"tab indent", "steps:\n\t- tool: x\n", "2: YAML syntax: "},
		{"not a mapping", "- tool: x\n", "1: the plan must be a mapping, not a list"},
		{"scalar document", "hello\n", "1: the plan must be a mapping, not a string"},
		{"no steps", "name: x\n", "1: the plan has no `steps` (or `phases`)"},
		{"unknown top key", "name: x\nstep:\n  - tool: x\n", "2: unknown key `step` in the plan (did you mean `steps`?)"},
		{"unknown top key no hint", step + "tasks: 1\n", "4: unknown key `tasks` in the plan (allowed: name, vars, permissions, steps, phases)"},
		{"typo in step", "steps:\n  - tool: x\n    paramters: {a: 1}\n", "3: unknown key `paramters` in step (did you mean `parameters`?)"},
		{"camel case", "steps:\n  - tool: x\n    saveOutputAs: y\n", "3: unknown key `saveOutputAs` in step (did you mean `save_output_as`?)"},
		{"flat params", "steps:\n  - tool: execute_command\n    command: ls\n", "3: unknown key `command` in step (a tool's parameters go under `parameters`)"},
		{"both", step + "phases:\n  - goal: g\n    steps: [{tool: x}]\n", "4: the plan has both `steps` and `phases`: use one"},
		{"empty steps", "steps: []\n", "1: the plan has no steps: `steps` is empty"},
		{"null steps", "steps:\n", "1: the plan has no steps: `steps` is empty"},
		{"steps not list", "steps: {tool: x}\n", "1: `steps` must be a list, not a mapping"},
		{"step not mapping", "steps:\n  - execute_command\n", "2: step must be a mapping, not a string"},
		{"no tool", "steps:\n  - description: x\n", "2: step has no `tool`"},
		{"empty tool", "steps:\n  - tool: ''\n", "2: step has an empty `tool`"},
		{"tool number", "steps:\n  - tool: 42\n", "2: `tool` must be a string, not a number (quote it)"},
		{"condition bool", "steps:\n  - tool: x\n    condition: True\n", "3: `condition` must be a string, not a boolean (quote it)"},
		{"description list", "steps:\n  - tool: x\n    description: [a]\n", "3: `description` must be a string, not a list"},
		{"params list", "steps:\n  - tool: x\n    parameters: [a]\n", "3: `parameters` must be a mapping, not a list"},
		{"duplicate step key", "steps:\n  - tool: x\n    tool: y\n", "3: duplicate key `tool` in step (first on line 2)"},
		{"duplicate param", "steps:\n  - tool: x\n    parameters:\n      a: 1\n      a: 2\n", "5: duplicate key `a` in parameters (first on line 4)"},
		{"int param key", "steps:\n  - tool: x\n    parameters: {1: a}\n", "3: a key in parameters must be a string, not a number"},
		{"nan", "steps:\n  - tool: x\n    parameters: {t: .nan}\n", "3: parameters.t: .nan is not a finite number"},
		{"custom tag", "steps:\n  - tool: x\n    parameters: {t: !env HOME}\n", "3: parameters.t: unsupported YAML tag !env"},
		{"binary", "steps:\n  - tool: x\n    parameters: {t: !!binary aGk=}\n", "3: parameters.t: unsupported YAML tag !!binary"},
		{"bool param key", "steps:\n  - tool: x\n    parameters:\n      a: {true: 1}\n", "4: a key in parameters.a must be a string, not a boolean"},
		{"merge key", "steps:\n  - tool: x\n    parameters:\n      <<: {a: 1}\n", "4: parameters: YAML merge keys (<<) are not supported"},
		{"anchor", "steps:\n  - &s {tool: x}\n  - *s\n", "2: YAML anchors and aliases are not supported in plan files"},
		{"two documents", step + "---\n" + step, "5: a second YAML document: a plan file holds one (remove the `---`)"},
		{"bad second document", step + "---\n[\n", "6: YAML syntax: did not find expected node content"},
		{"vars list", "vars: [a]\n" + step, "1: `vars` must be a mapping of names to strings, not a list"},
		{"var name", "vars: {last: x}\n" + step, "1: vars: invalid variable name \"last\": the name is reserved"},
		{"var name dash", "vars:\n  log-file: x\n" + step, "2: vars: invalid variable name \"log-file\""},
		{"var null", "vars:\n  a:\n" + step, "2: var a has no value (write \"\" for an empty string)"},
		{"var mapping", "vars:\n  a: {b: c}\n" + step, "2: var a must be a string, not a mapping"},
		{"empty phases", "phases: []\n", "1: the plan has no phases: `phases` is empty"},
		{"null phases", "name: x\nphases:\n", "2: the plan has no phases: `phases` is empty"},
		{"phase goal list", "phases:\n  - goal: [a]\n    steps: [{tool: x}]\n", "2: `goal` must be a string, not a list"},
		{"phase no goal", "phases:\n  - steps: [{tool: x}]\n", "2: phase 1 has no `goal`"},
		{"phase no steps", "phases:\n  - goal: g\n", "2: phase 1 has no `steps`"},
		{"phase number", "phases:\n  - phase: 2\n    goal: g\n    steps: [{tool: x}]\n", "2: phase 1 says `phase: 2`: phases are numbered 1, 2, … in order"},
		{"phase typo", "phases:\n  - goal: g\n    sucess_criteria: x\n    steps: [{tool: x}]\n", "3: unknown key `sucess_criteria` in phase 1 (did you mean `success_criteria`?)"},
		{"name number", "name: 1\n" + step, "1: `name` must be a string, not a number (quote it)"},
		{"too deep", "steps:\n  - tool: x\n    parameters: {a: " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "}\n", "3: nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tt.src), "bad.yaml")
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", p)
			}
			if !errors.Is(err, ErrPlan) {
				t.Errorf("%v does not wrap ErrPlan", err)
			}
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			if want := "bad.yaml:" + tt.want; !strings.HasPrefix(first, want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", err, want)
			}
		})
	}
}

func TestParseCollectsErrors(t *testing.T) {
	_, err := Parse(strings.NewReader("nmae: x\nsteps:\n  - tool: 1\n  - paramters: {}\n"), "p.yaml")
	for _, want := range []string{
		"p.yaml:1: unknown key `nmae` in the plan (did you mean `name`?)",
		"p.yaml:3: `tool` must be a string",
		"p.yaml:4: unknown key `paramters` in step (did you mean `parameters`?)",
		"p.yaml:4: step has no `tool`",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nlacks %q", err, want)
		}
	}
}

func TestParseLimits(t *testing.T) {
	big := "steps:\n  - tool: x\n    parameters: {a: '" + strings.Repeat("x", MaxFileSize) + "'}\n"
	if _, err := Parse(strings.NewReader(big), "big.yaml"); err == nil || !strings.Contains(err.Error(), "big.yaml:1: the file is larger than") {
		t.Errorf("big file: %v", err)
	}
	many := "steps:\n  - tool: x\n    parameters: {a: [" + strings.Repeat("1,", MaxNodes) + "1]}\n"
	if _, err := Parse(strings.NewReader(many), "many.yaml"); err == nil || !strings.Contains(err.Error(), "more than 100000 YAML nodes") {
		t.Errorf("many nodes: %v", err)
	}
	// The billion-laughs shape: refused at the first anchor.
	laughs := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	if _, err := Parse(strings.NewReader(laughs), "lol.yaml"); err == nil || !strings.Contains(err.Error(), "lol.yaml:1: YAML anchors") {
		t.Errorf("aliases: %v", err)
	}
}

func TestParseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("steps:\n  - tool: x\n    bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":3: unknown key `bogus`") {
		t.Errorf("ParseFile: %v", err)
	}
	if _, err := ParseFile(path + ".missing"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile of a missing file: %v", err)
	}
}
