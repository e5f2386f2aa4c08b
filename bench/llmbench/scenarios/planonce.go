package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/testenv"
)

// ThreeHosts is the config flag flip on three hosts (issue 31): ReAct
// holds one conversation per host; adaptive does the task with the model
// on the first host, its steps written with the host's variable
// {{host_dir}}, and they are replayed on the other two with no model call
// (agent run --plan-once).
func ThreeHosts() Scenario {
	sc := FlipFlag()
	sc.Name = "3-hosts"
	sc.PlanOnce = []string{"h1", "h2", "h3"}
	sc.Vars = func(dir string) map[string]any { return map[string]any{"host_dir": dir} }
	script := sc.Script
	sc.Script = func(mode stepgen.Mode, dir string) []testenv.Reply {
		if mode == stepgen.ModeAdaptive {
			return script(mode, "{{host_dir}}")
		}
		return script(mode, dir)
	}
	return sc
}

// add adds src's counts, bodies and work to m.
func (m *Measure) add(src Measure) {
	m.Calls += src.Calls
	m.PromptTokens += src.PromptTokens
	m.O200k += src.O200k
	m.CompletionTokens += src.CompletionTokens
	m.BodyBytes += src.BodyBytes
	m.ToolBytes += src.ToolBytes
	m.SystemBytes += src.SystemBytes
	m.MessageBytes += src.MessageBytes
	m.Steps += src.Steps
	m.Total += src.Total
	m.InModel += src.InModel
	m.OnHost += src.OnHost
	m.Probe += src.Probe
	m.Bodies = append(m.Bodies, src.Bodies...)
	m.Work = append(m.Work, src.Work...)
}

// planOnce measures a PlanOnce scenario on h's transport, one directory
// per host under h.Dir.
func planOnce(ctx context.Context, h Host, sc Scenario) (Pair, error) {
	on := func(name string) (Host, error) {
		d := filepath.Join(h.Dir, name)
		return Host{Name: h.Name, Transport: h.Transport, Dir: d}, os.MkdirAll(d, 0o755)
	}
	first, err := on(sc.PlanOnce[0])
	if err != nil {
		return Pair{}, err
	}
	p := Pair{}
	if p.Adaptive, err = Run(ctx, first, sc, stepgen.ModeAdaptive, nil); err != nil {
		return p, err
	}
	for _, name := range sc.PlanOnce[1:] {
		other, err := on(name)
		if err != nil {
			return p, err
		}
		m, err := replay(ctx, other, sc, p.Adaptive.ran)
		if err != nil {
			return p, err
		}
		p.Adaptive.add(m)
	}
	p.ReAct = Measure{Scenario: sc.Name, Mode: stepgen.ModeReAct, Variant: "react", Transport: h.Name, Offered: p.Adaptive.Offered}
	p.ReActAll = Measure{Scenario: sc.Name, Mode: stepgen.ModeReAct, Variant: "react-all", Transport: h.Name}
	for _, name := range sc.PlanOnce {
		host, err := on(name)
		if err != nil {
			return p, err
		}
		for _, x := range []struct {
			dst   *Measure
			offer []string
		}{{&p.ReAct, p.Adaptive.Offered}, {&p.ReActAll, nil}} {
			m, err := Run(ctx, host, sc, stepgen.ModeReAct, x.offer)
			if err != nil {
				return p, err
			}
			x.dst.add(m)
			if x.offer == nil {
				x.dst.Offered = m.Offered
			}
		}
	}
	return p, nil
}

// replay runs the steps the model ran on the first host on host, with no
// model, as --plan-once does: each must end as it did there; then the end
// state is checked.
func replay(ctx context.Context, host Host, sc Scenario, ran []stepgen.RanStep) (Measure, error) {
	m := Measure{Scenario: sc.Name, Mode: stepgen.ModeAdaptive, Transport: host.Name}
	if err := sc.Setup(host.Dir); err != nil {
		return m, fmt.Errorf("%s setup: %w", sc.Name, err)
	}
	tr, onHost := timeTransport(host.Transport)
	vars := execctx.New()
	for k, v := range sc.Vars(host.Dir) {
		if err := vars.Set(k, v); err != nil {
			return m, err
		}
	}
	emit := func(ev event.Event) {
		if st := ev.Step; ev.Kind == event.KindStep && st.Status == "ok" {
			m.Work = append(m.Work, workOf(st.Tool, st.Parameters))
		}
	}
	ex := executor.New(executor.Config{
		Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil), Emit: emit, Vars: vars,
	})
	start := time.Now()
	for i, rs := range ran {
		ex.SetPhase(rs.Phase.Phase)
		r, err := ex.RunStep(ctx, rs.Step)
		if err != nil {
			return m, fmt.Errorf("%s replay on %s, step %d: %w", sc.Name, host.Dir, i+1, err)
		}
		if r.Status != rs.Status {
			return m, fmt.Errorf("%s replay on %s, step %d (%s): %s, %s on the first host: %s", sc.Name, host.Dir, i+1, r.Tool, r.Status, rs.Status, r.Observation)
		}
		m.Steps++
	}
	m.Total = time.Since(start)
	m.OnHost, m.Probe = onHost.spent()
	if err := sc.Check(host.Dir); err != nil {
		return m, fmt.Errorf("%s replay on %s: end state: %w", sc.Name, host.Dir, err)
	}
	return m, nil
}
