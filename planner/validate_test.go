package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
)

// validateErrs returns the lines of Validate's error, or nil.
func validateErrs(t *testing.T, src string, preset ...string) []string {
	t.Helper()
	err := Validate(mustParse(t, src), coreTools(), preset)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrPlan) {
		t.Errorf("%v does not wrap ErrPlan", err)
	}
	return strings.Split(err.Error(), "\n")
}

func TestValidateOK(t *testing.T) {
	src := `vars: {dir: /tmp}
phases:
  - goal: one
    steps:
      - tool: execute_command
        parameters: {command: "ls {{dir}} {{ host }}"}
        save_output_as: listing
      - tool: check_condition
        parameters: {condition: "'x' in listing and last.exit_code == 0"}
        save_output_as: has_x
  - goal: two
    steps:
      - tool: write_file
        parameters:
          file_path: "{{dir}}/out"
          content: "{{ last.stdout }} {{listing}}"
          extra: {nested: ["{{has_x}}"]}
        condition: has_x == True and len(listing) > 0
      - tool: execute_command
        parameters: {command: "docker ps --format '{{.Names}}'"}
`
	if errs := validateErrs(t, src, "host"); errs != nil {
		t.Errorf("Validate: %q", errs)
	}
}

func TestValidateUseBeforeSet(t *testing.T) {
	tests := []struct {
		name, src string
		want      string
	}{
		{"last in step 1 parameter", `steps:
  - tool: execute_command
    parameters: {command: "echo {{last.stdout}}"}
`, "plan.yaml:2: step 1 (execute_command): parameter command uses `last` in the first step, before any step has run"},
		{"last in step 1 condition", `steps:
  - tool: execute_command
    parameters: {command: ls}
    condition: last.success
`, "plan.yaml:2: step 1 (execute_command): condition uses `last` in the first step"},
		{"later step sets it", `steps:
  - tool: execute_command
    parameters: {command: "cat {{out}}"}
  - tool: execute_command
    parameters: {command: ls}
    save_output_as: out
`, "plan.yaml:2: step 1 (execute_command): parameter command uses `out` before step 2 sets it"},
		{"own save_output_as in condition", `steps:
  - tool: execute_command
    parameters: {command: ls}
    save_output_as: out
    condition: out == ''
`, "plan.yaml:2: step 1 (execute_command): condition uses `out`, which this step's own save_output_as sets only after it runs"},
		{"never set, nested", `steps:
  - tool: write_file
    parameters:
      file_path: /tmp/x
      content: ok
      opts: {list: [a, "{{ ghost.key }}"]}
`, "plan.yaml:2: step 1 (write_file): parameter opts uses `ghost`, which no step, var or --var sets"},
		{"check_condition parameter", `steps:
  - tool: execute_command
    parameters: {command: ls}
  - tool: check_condition
    parameters: {condition: "script_output.strip() == '1'"}
`, "plan.yaml:4: step 2 (check_condition): parameter condition uses `script_output`, which no step"},
		{"across phases", `phases:
  - goal: a
    steps:
      - tool: check_condition
        parameters: {condition: "x == 1"}
  - goal: b
    steps:
      - tool: execute_command
        parameters: {command: ls}
        save_output_as: x
`, "plan.yaml:4: step 1 (check_condition): parameter condition uses `x` before step 2 sets it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := validateErrs(t, tt.src)
			if len(errs) != 1 || !strings.HasPrefix(errs[0], tt.want) {
				t.Errorf("Validate:\n  %q\nwant one error starting with\n  %s", errs, tt.want)
			}
			err := Validate(mustParse(t, tt.src), nil, nil)
			if !errors.Is(err, execctx.ErrUnknownVariable) {
				t.Errorf("%v does not wrap execctx.ErrUnknownVariable", err)
			}
		})
	}
	// The same plans pass when the name is preset (--var, inventory).
	if errs := validateErrs(t, "steps:\n  - tool: execute_command\n    parameters: {command: \"cat {{out}}\"}\n", "out"); errs != nil {
		t.Errorf("preset: %q", errs)
	}
}

func TestValidateCollectsAll(t *testing.T) {
	src := `vars: {dir: /tmp}
steps:
  - tool: run_command
    parameters: {command: ls}
  - tool: read_file
    parameters: {path: /etc/hosts}
    save_output_as: 2bad
  - tool: execute_command
    parameters: {command: "ls {{dir"}
    condition: "x =="
  - tool: edit_file
    parameters: {file_path: a, search_pattern: b, replacement: "{{nope}}"}
    save_output_as: last
  - tool: check_condition
    parameters: {condition: "x.nosuch()"}
`
	errs := validateErrs(t, src)
	want := []string{
		"plan.yaml:3: step 1 (run_command): unknown tool \"run_command\"",
		"plan.yaml:5: step 2 (read_file): missing required parameter \"file_path\"",
		"plan.yaml:5: step 2 (read_file): save_output_as: invalid variable name \"2bad\"",
		"plan.yaml:8: step 3 (execute_command): condition: condition \"x ==\"",
		"plan.yaml:8: step 3 (execute_command): parameter command: bad template: unterminated {{",
		"plan.yaml:11: step 4 (edit_file): save_output_as: invalid variable name \"last\": the name is reserved",
		"plan.yaml:11: step 4 (edit_file): parameter replacement uses `nope`, which no step, var or --var sets",
		"plan.yaml:14: step 5 (check_condition): parameter condition: condition \"x.nosuch()\": unknown method .nosuch()",
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(want), strings.Join(errs, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(errs[i], want[i]) {
			t.Errorf("error %d:\n  %s\nwant prefix\n  %s", i, errs[i], want[i])
		}
	}
}

func TestValidateProgrammatic(t *testing.T) {
	p := &Plan{Vars: map[string]string{"not ok": "x"}, Phases: []Phase{{Phase: 1, Goal: "g"}}}
	err := Validate(p, nil, nil)
	for _, want := range []string{"plan: vars: invalid variable name \"not ok\"", "plan: the plan has no steps", "plan: phase 1 (g) has no steps"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nlacks %q", err, want)
		}
	}
	p = &Plan{Phases: []Phase{{Steps: []Step{{Parameters: map[string]any{"command": "ls"}}}}}}
	if err := Validate(p, coreTools(), nil); err == nil || err.Error() != "plan: step 1 (no tool): no tool" {
		t.Errorf("Validate: %v", err)
	}
}
