package planner

import (
	"strings"
	"testing"
)

// ignore_errors reads, validates and writes back; a bad value is an error.
func TestIgnoreErrorsParse(t *testing.T) {
	p := mustParse(t, "steps:\n  - tool: execute_command\n    parameters: {command: grep ERROR log}\n    save_output_as: errs\n    ignore_errors: true\n  - tool: execute_command\n    parameters: {command: echo ok}\n    ignore_errors: false\n")
	st := p.Steps()
	if !st[0].IgnoreErrors || st[1].IgnoreErrors {
		t.Fatalf("IgnoreErrors = %v, %v", st[0].IgnoreErrors, st[1].IgnoreErrors)
	}
	back := roundTrip(t, p)
	if !back.Steps()[0].IgnoreErrors {
		t.Error("ignore_errors lost in the round trip")
	}
	out, err := Marshal(p)
	if err != nil || !strings.Contains(string(out), "ignore_errors: true") || strings.Contains(string(out), "ignore_errors: false") {
		t.Errorf("Marshal: %v\n%s", err, out)
	}
	for src, want := range map[string]string{
		"steps:\n  - tool: execute_command\n    parameters: {command: x}\n    ignore_errors: yes please\n": "`ignore_errors` must be true or false",
		"steps:\n  - tool: execute_command\n    parameters: {command: x}\n    ignore_errors: [true]\n":     "`ignore_errors` must be true or false",
		"steps:\n  - tool: execute_command\n    parameters: {command: x, ignore_errors: true}\n":           "belongs at the step level",
	} {
		_, err := Parse(strings.NewReader(src), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
}
