package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// TestShellUndoOverCapIsHigh: a medium command writing a file larger than
// the undo journal keeps is high (undo could not take it back), and one
// under the cap stays medium with the file journaled.
func TestShellUndoOverCapIsHigh(t *testing.T) {
	h := newHarness(t)
	f := h.write("big.log", strings.Repeat("x", 100))
	h.jrnl.MaxBytes = 50
	e := h.executor(safety.ModeMedium, false, nil)
	r, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo y >> " + f}})
	if err != nil || r.Risk.Level != safety.High || r.Status != "denied" || !strings.Contains(strings.Join(r.Risk.Reasons, ";"), "more than the undo journal keeps") {
		t.Fatalf("over the cap: %v %s %s %v", err, r.Risk.Level, r.Status, r.Risk.Reasons)
	}
	h.jrnl.MaxBytes = 1000
	r, err = e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo y >> " + f}})
	if err != nil || r.Risk.Level != safety.Medium || r.Status != "ok" || len(r.Journaled) != 1 {
		t.Fatalf("under the cap: %v %s %s %v", err, r.Risk.Level, r.Status, r.Journaled)
	}
}
