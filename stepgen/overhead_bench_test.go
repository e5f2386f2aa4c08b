package stepgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/autoshell/agent/bench/llmbench/scenarios"
	"github.com/autoshell/agent/stepgen"
)

// BenchmarkAgentOverhead runs the three scenarios of bench/llmbench with
// the scripted model at zero delay through stepgen.Run, the executor and
// a real transport, and reports the agent's time per step with the time
// inside the model calls (client and scripted server) taken out: ms/step,
// target ≤ 5 (issue 4) — and agent-ms/step, the same without the time
// inside the transport (the commands and file transfers themselves and
// the environment probe), which is the agent's own work. It also reports the prompt tokens per scenario
// set, for the economy figures (adaptive ≤ 60% of react).
func BenchmarkAgentOverhead(b *testing.B) {
	hosts := []struct {
		name string
		open func(context.Context) (scenarios.Host, func() error, error)
	}{
		{"local", func(context.Context) (scenarios.Host, func() error, error) { return scenarios.LocalHost() }},
		{"ssh", scenarios.SSHHost},
	}
	for _, hs := range hosts {
		for _, mode := range []stepgen.Mode{stepgen.ModeAdaptive, stepgen.ModeReAct} {
			b.Run(hs.name+"/"+string(mode), func(b *testing.B) {
				ctx := context.Background()
				h, closeHost, err := hs.open(ctx)
				if err != nil {
					b.Fatal(err)
				}
				defer closeHost()
				var outside, onHost time.Duration
				steps, tokens := 0, 0
				for b.Loop() {
					for _, sc := range scenarios.All() {
						m, err := scenarios.Run(ctx, h, sc, mode, nil)
						if err != nil {
							b.Fatal(err)
						}
						outside += m.Total - m.InModel
						onHost += m.OnHost
						steps += m.Steps
						tokens += m.PromptTokens
					}
				}
				b.ReportMetric(float64(outside.Microseconds())/1000/float64(steps), "ms/step")
				b.ReportMetric(float64((outside-onHost).Microseconds())/1000/float64(steps), "agent-ms/step")
				b.ReportMetric(float64(tokens)/float64(b.N), "prompt-tokens/op")
			})
		}
	}
}
