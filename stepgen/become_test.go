package stepgen

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestModelBecomeRefusedWithoutOperator: a model that asks for become in a
// run the operator did not start with --become gets a tool error, and
// nothing runs (the executor here has no become transport at all: a step
// that reached it with become would fail differently).
func TestModelBecomeRefusedWithoutOperator(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		testenv.Calls(testenv.Call("execute_command", `{"command":"touch DIR/made","become":true}`)),
		testenv.Calls(testenv.Call("execute_command", `{"command":"echo x","become":"yes"}`)),
		testenv.Text("done"))
	res, err := f.run(ModeReAct, 0, "escalate", 0)
	if err != nil || res.Steps != 0 {
		t.Fatalf("Run: %v, %+v", err, res.Summary)
	}
	if got := f.toolReplies(1); len(got) != 1 || !strings.Contains(got[0], "become is not enabled for this run") {
		t.Errorf("tool reply %q", got)
	}
	if got := f.toolReplies(2); len(got) != 2 || !strings.Contains(got[1], "become of execute_command must be true or false") {
		t.Errorf("tool replies %q", got)
	}
}
