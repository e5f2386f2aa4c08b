package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// BenchmarkStepRedaction is one local step printing 1 MiB (base64 of
// random bytes) through a Host whose events go to a sink, as the
// terminal's do: its streamed output, its step event, its audit line and
// the record all redacted. With an empty secret set (the patterns alone:
// before issue 27) and with 48 known secrets in all their shapes.
func BenchmarkStepRedaction(b *testing.B) {
	b.Setenv("XDG_STATE_HOME", b.TempDir())
	step := planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "head -c 786432 /dev/urandom | base64"}}
	for _, n := range []int{0, 48} {
		b.Run(fmt.Sprintf("secrets-%d", n), func(b *testing.B) {
			set := redact.NewSet()
			for i := range n {
				set.Add(fmt.Sprintf("S%d", i), fmt.Sprintf("sk-Zq7Kx9Wm2Rt5Yp8Lb3-%03d", i), redact.Known)
			}
			tr, err := local.New()
			if err != nil {
				b.Fatal(err)
			}
			h, err := OpenOn(tr, "local", HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil),
				Emit: func(event.Event) {}, Redact: set})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			b.SetBytes(1 << 20)
			for b.Loop() {
				if r, err := h.Executor().RunStep(context.Background(), step); err != nil || r.Status != "ok" {
					b.Fatal(err, r.Status, r.Observation)
				}
			}
		})
	}
}
