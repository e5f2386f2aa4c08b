package executor

import (
	"context"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// TestConfinedThreadFollowsEndedCommand: on a Restrictor that reuses its
// threads (as agent's local confinement does), a step's command runs on
// the thread of the step before when that step's process group is gone,
// and on a new thread when a process of it lives on in its group.
func TestConfinedThreadFollowsEndedCommand(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("no Landlock")
	}
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	r, err := confine.NewRestrictor(confine.Compile(confine.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Reuse()
	e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeNever, nil), Confiner: threadConfiner{r}})
	step := func(cmd string) {
		t.Helper()
		res, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}})
		if err != nil || res.Status != "ok" {
			t.Fatalf("%s: %s %q %v", cmd, res.Status, res.Observation, err)
		}
	}
	// The rules list nothing: no directory's change moves them.
	step("true")
	step("true")
	if r.Reused() != 1 {
		t.Fatalf("two steps: %d commands on a reused thread, want 1", r.Reused())
	}
	step("sleep 1 &")
	step("true")
	if r.Reused() != 2 {
		t.Fatalf("after a step that left a process: %d reused, want 2 (the background step's own)", r.Reused())
	}
	step("true")
	if r.Reused() != 3 {
		t.Fatalf("%d reused, want 3", r.Reused())
	}
}
