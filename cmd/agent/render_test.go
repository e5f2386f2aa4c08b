package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
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

// The one-host summary names each shell command undo cannot put back
// (issue 29: it said "(2 commands)" alone), escaped and on one line.
func TestSummaryNamesUnjournaledCommands(t *testing.T) {
	var term bytes.Buffer
	r := newTermRenderer(&term)
	for i, c := range []string{"systemctl restart nginx", "rm -rf /var/cache/app\n  && echo \x1b[2Jdone"} {
		r.event(event.Event{Kind: event.KindStep, Host: "web", Step: &event.Step{Step: i + 2, Tool: "execute_command",
			Status: "ok", Risk: "high", Command: c}})
	}
	r.finish(executor.Summary{Host: "web", Session: "S1", Success: true, Steps: 2, OK: 2})
	out := term.String()
	for _, want := range []string{"cannot be undone (2 commands):\n", "\n  step 2: systemctl restart nginx", "\n  step 3: rm -rf /var/cache/app && echo \\x1b[2Jdone"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// A dry run ends "dry run: nothing changed", not "success" (issue 29).
func TestDryRunSummary(t *testing.T) {
	for _, dry := range []bool{true, false} {
		var term bytes.Buffer
		r := newTermRenderer(&term)
		r.event(event.Event{Kind: event.KindPlan, Host: "web", Plan: &event.Plan{Name: "p", DryRun: dry}})
		r.finish(executor.Summary{Host: "web", Success: true, Steps: 1, Skipped: 1})
		if got := strings.Contains(term.String(), "dry run: nothing changed on web"); got != dry || strings.Contains(term.String(), "success") == dry {
			t.Errorf("dry run %v:\n%s", dry, term.String())
		}
	}
}
