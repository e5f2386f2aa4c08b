package executor

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// threadConfiner confines every level on one confined thread (a
// Restrictor), as agent does locally.
type threadConfiner struct{ r *confine.Restrictor }

func (c threadConfiner) Confine(context.Context, confine.Level) (confine.Confinement, error) {
	return confine.Confinement{Thread: c.r}, nil
}
func (threadConfiner) Explain(confine.Level, string) string { return "" }
func (threadConfiner) FileBlocked(bool, string) string      { return "" }
func (threadConfiner) Sandboxed() bool                      { return false }
func (threadConfiner) LevelBlocked(context.Context, confine.Level, bool, bool, string) (string, error) {
	return "", nil
}

// TestCommandWaitsForDurable: a step's command does not start before
// Config.Durable returned — on a confined thread, which is confined
// meanwhile, and unconfined — and a Durable that fails refuses the step
// (fail closed) without starting it.
func TestCommandWaitsForDurable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     safety.Mode
		confined bool
	}{{"confined thread", safety.ModeNever, true}, {"unconfined", safety.ModeAll, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := local.New()
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(tc.mode, nil)}
			if tc.confined {
				if confine.ABI() < 1 {
					t.Skip("no Landlock")
				}
				r, err := confine.NewRestrictor(confine.Compile(confine.Spec{}))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				cfg.Confiner = threadConfiner{r}
			}
			var started, waited atomic.Int32
			release := make(chan error, 1)
			cfg.Started = func(int) { started.Add(1) }
			cfg.Durable = func() error {
				waited.Add(1)
				return <-release
			}
			e := New(cfg)
			step := planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "true"}}
			done := make(chan StepResult, 1)
			go func() {
				res, _ := e.RunStep(context.Background(), step)
				done <- res
			}()
			time.Sleep(200 * time.Millisecond)
			if started.Load() != 0 || waited.Load() != 1 {
				t.Fatalf("before Durable returned: %d started, Durable called %d times", started.Load(), waited.Load())
			}
			release <- nil
			if res := <-done; res.Status != "ok" || started.Load() != 1 {
				t.Fatalf("after: %s %q, %d started", res.Status, res.Observation, started.Load())
			}

			release <- errors.New("disk full")
			res, _ := e.RunStep(context.Background(), step)
			if res.Status != "denied" || !strings.Contains(res.Observation, "disk full") || started.Load() != 1 {
				t.Fatalf("Durable failed: %s %q, %d started", res.Status, res.Observation, started.Load())
			}
		})
	}
}
