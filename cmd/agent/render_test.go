package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoshell/agent/event"
)

// TestInterruptedStepOutput: a step stopped by Ctrl-C reads "interrupted"
// in the terminal view and in --json, never Go's "context canceled"; what
// it printed before is kept, and other steps' output is untouched.
func TestInterruptedStepOutput(t *testing.T) {
	out := "partial line\n[ERROR]: sh x: run \"sh x\": context canceled"
	st := &event.Step{Step: 1, Tool: "execute_command", Status: "error", Output: out, Interrupted: true}
	ev := event.Event{Kind: event.KindStep, Host: "local", Step: st}

	var js bytes.Buffer
	(&jsonRenderer{enc: json.NewEncoder(&js), stderr: &js}).event(ev)
	var term bytes.Buffer
	newTermRenderer(&term).event(ev)
	for name, got := range map[string]string{"json": js.String(), "terminal": term.String()} {
		if strings.Contains(got, "context canceled") || !strings.Contains(got, "[interrupted]") || !strings.Contains(got, "partial line") {
			t.Errorf("%s view:\n%s", name, got)
		}
	}
	if st.Output != out {
		t.Errorf("the event itself was changed: %q", st.Output)
	}

	ev2 := event.Event{Kind: event.KindStep, Host: "local", Step: &event.Step{Step: 1, Tool: "execute_command", Status: "error",
		Output: "[ERROR]: context canceled"}}
	var term2 bytes.Buffer
	newTermRenderer(&term2).event(ev2)
	if !strings.Contains(term2.String(), "context canceled") {
		t.Errorf("a step that was not interrupted lost its output:\n%s", term2.String())
	}
}
