package planner

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

func TestValidateMisplacedStepKeys(t *testing.T) {
	src := `steps:
  - tool: execute_command
    parameters:
      command: rm -rf /tmp/x
      condition: "False"
  - tool: check_condition
    parameters: {condition: "True"}
  - tool: write_file
    parameters: {file_path: /tmp/x, content: x, save_output_as: out, description: d}
`
	_, err := Parse(strings.NewReader(src), "plan.yaml")
	want := []string{
		"plan.yaml:5: `condition` belongs at the step level, not under parameters",
		"plan.yaml:9: `save_output_as` belongs at the step level, not under parameters",
		"plan.yaml:9: `description` belongs at the step level, not under parameters",
	}
	if err == nil {
		t.Fatal("Parse accepted step keys under parameters")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Parse error lacks %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "plan.yaml:7") {
		t.Errorf("check_condition's own condition refused: %v", err)
	}
	// A plan built in code is checked by Validate.
	p := &Plan{Source: "gen", Phases: []Phase{{Phase: 1, Steps: []Step{
		{Line: 3, Tool: "execute_command", Parameters: map[string]any{"command": "ls", "condition": "x"}},
	}}}}
	if err := Validate(p, coreTools(), nil); err == nil || !strings.Contains(err.Error(), "gen:3: step 1 (execute_command): `condition` belongs at the step level") {
		t.Errorf("Validate: %v", err)
	}
}

// A parameter that is one whole template passes validation whatever its
// type; its value is checked once resolved.
func TestValidateWholeTemplateTypes(t *testing.T) {
	reg := tools.Default(safety.DefaultPolicy())
	src := `vars: {t: "5", port: "22", proto: tcp}
steps:
  - tool: execute_command
    parameters: {command: "true", timeout: "{{t}}"}
  - tool: ss
    parameters: {port: "{{ port }}", protocol: "{{proto}}"}
  - tool: grep
    parameters: {pattern: x, file: /etc/hosts, recursive: "{{t}}"}
`
	if err := Validate(mustParse(t, src), reg, nil); err != nil {
		t.Errorf("Validate: %v", err)
	}
	bad := "steps:\n  - tool: execute_command\n    parameters: {command: \"true\", timeout: \"{{t}}s\"}\n"
	if err := Validate(mustParse(t, bad), reg, []string{"t"}); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("a partial template in an integer: %v", err)
	}

}
