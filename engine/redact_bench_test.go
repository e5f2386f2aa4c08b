package engine

import (
	"testing"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/redact"
)

// A step's two events as the fan-out benchmark makes them.
var benchEvents = []event.Event{
	{Kind: event.KindStepStart, Host: "web01", StepStart: &event.StepStart{Phase: 1, Step: 3, Tool: "execute_command",
		Parameters: map[string]any{"command": "mkdir -p /tmp/x/web01 && echo web01 > /tmp/x/web01/f && cat /tmp/x/web01/f"},
		Command:    "mkdir -p /tmp/x/web01 && echo web01 > /tmp/x/web01/f && cat /tmp/x/web01/f", Risk: "medium"}},
	{Kind: event.KindStep, Host: "web01", Step: &event.Step{Phase: 1, Step: 3, Tool: "execute_command",
		Parameters: map[string]any{"command": "mkdir -p /tmp/x/web01 && echo web01 > /tmp/x/web01/f && cat /tmp/x/web01/f"},
		Status:     "ok", Output: "web01\n", DurationMS: 3, Command: "mkdir -p /tmp/x/web01 && echo web01 > /tmp/x/web01/f && cat /tmp/x/web01/f",
		Risk: "medium", Reasons: []string{"mkdir: creates /tmp/x/web01", "redirection writes /tmp/x/web01/f"}, Decision: "medium risk allowed by --approve medium"}},
}

func BenchmarkRedactStepEvents(b *testing.B) {
	set := redact.NewSet()
	set.Add("SECRET", "hunter2hunter2", redact.Known)
	r := Redactor{Set: set}
	b.ReportAllocs()
	for b.Loop() {
		for _, ev := range benchEvents {
			_ = r.Event(ev)
		}
	}
}
