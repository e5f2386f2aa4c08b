package stepgen

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
)

// Bad model output gives a clear error naming the tool and what is wrong.
func TestToStepErrors(t *testing.T) {
	for args, want := range map[string]string{
		`[1,2]`:                      "the arguments of execute_command are not a JSON object",
		`"ls"`:                       "the arguments of execute_command are not a JSON object",
		`{"command":`:                "the arguments of execute_command are not a JSON object",
		`{"command":"ls"} trailing`:  "the arguments of execute_command are not a JSON object",
		`{"description":5}`:          "description of execute_command must be a string, not 5",
		`{"save_output_as":["x"]}`:   "save_output_as of execute_command must be a string",
		`{"condition":{"a":1}}`:      "condition of execute_command must be a string",
		`{"save_output_as":"1bad"}`:  "save_output_as of execute_command:",
		`{"save_output_as":"a b"}`:   "save_output_as of execute_command:",
		`{"command":"ls","n":1e999}`: "the arguments of execute_command are not a JSON object",
		`{"save_output_as":"last"}`:  "save_output_as of execute_command:",
		`{"ignore_errors":"yes"}`:    "ignore_errors of execute_command must be true or false",
		`{"ignore_errors":1}`:        "ignore_errors of execute_command must be true or false",
		`{"become":"yes"}`:           "become of execute_command must be true or false",
	} {
		_, err := toStep(llm.ToolCall{Name: "execute_command", Arguments: json.RawMessage(args)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
	for _, args := range []string{``, `null`, `{}`} {
		st, err := toStep(llm.ToolCall{Name: "read_file", Arguments: json.RawMessage(args)})
		if err != nil || st.Parameters == nil || len(st.Parameters) != 0 || st.Tool != "read_file" {
			t.Errorf("%q: %+v, %v", args, st, err)
		}
	}
	// step keys with null or blank values are absent
	st, err := toStep(llm.ToolCall{Name: "execute_command", Arguments: json.RawMessage(`{"command":"ls","condition":null,"save_output_as":"  ","description":" d "}`)})
	if err != nil || st.Condition != "" || st.SaveOutputAs != "" || st.Description != "d" || len(st.Parameters) != 1 {
		t.Errorf("%+v, %v", st, err)
	}
}

// FuzzToStep: whatever the model sends as a tool call, toStep never panics;
// an error names the tool; a step it accepts has no step key left among its
// parameters (check_condition keeps its own condition), a valid variable
// name, and survives a plan file: planner.Marshal then planner.Parse give
// the same step back, so --save-plan can write what the model wrote.
func FuzzToStep(f *testing.F) {
	f.Add("execute_command", `{"command":"~/test/a.sh","save_output_as":"out","description":"run it"}`)
	f.Add("edit_file", `{"file_path":"~/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"out.strip() == '1'"}`)
	f.Add("check_condition", `{"condition":"x == 1","save_output_as":"ok"}`)
	f.Add("write_file", `{"file_path":"f","content":"a\nb\n","mode":"a","count":1.5,"list":[1,"x",null,{"k":true}]}`)
	f.Add("x", `{"<<":"merge","":"","\u00e9":"\u0000"}`)
	f.Add("x", `{"description":5}`)
	f.Add("execute_command", `{"command":"sh s","ignore_errors":true,"become":false}`)
	f.Add("x", `[`)
	f.Add("", `null`)
	f.Fuzz(func(t *testing.T, name, args string) {
		st, err := toStep(llm.ToolCall{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			if !strings.Contains(err.Error(), name) || err.Error() == "" {
				t.Fatalf("error does not name the tool %q: %v", name, err)
			}
			return
		}
		if st.Tool != name || st.Parameters == nil {
			t.Fatalf("step %+v", st)
		}
		for _, k := range []string{"description", "save_output_as", "condition", "ignore_errors", "become"} {
			if _, ok := st.Parameters[k]; ok && !(k == "condition" && name == "check_condition") {
				t.Fatalf("step key %s left in the parameters: %+v", k, st)
			}
		}
		if st.SaveOutputAs != "" {
			if err := execctx.ValidateName(st.SaveOutputAs); err != nil {
				t.Fatalf("invalid variable accepted: %v", err)
			}
		}
		if !toolName.MatchString(name) {
			return // only registered tool names reach toStep in a run
		}
		data, err := planner.Marshal(&planner.Plan{Phases: []planner.Phase{{Steps: []planner.Step{st}}}})
		if err != nil {
			t.Fatalf("marshal %+v: %v", st, err)
		}
		back, err := planner.Parse(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			t.Fatalf("the saved step does not read back: %v\n%s", err, data)
		}
		got := back.Steps()
		if len(got) != 1 {
			t.Fatalf("%d steps back:\n%s", len(got), data)
		}
		got[0].Line = 0
		if !reflect.DeepEqual(normal(got[0]), normal(st)) {
			t.Fatalf("round trip changed the step:\n%#v\n%#v\n%s", st, got[0], data)
		}
	})
}

// normal makes an empty parameter map nil, as a plan file reads it back.
func normal(st planner.Step) planner.Step {
	if len(st.Parameters) == 0 {
		st.Parameters = nil
	}
	return st
}

// toolName is the shape of the registry's tool names.
var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
