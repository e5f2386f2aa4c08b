package engine

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/tools"
)

// With --plan-once the model does the task on the first selected host
// that can be reached; its steps (stepgen.Result.Ran, as the model wrote
// them: templates and conditions unresolved) are then replayed on every
// other host with no model call, conditions and templates evaluated over
// that host's variables. A host leaves the first host's path, and falls
// back to the model (the adaptive loop, on the same connection and
// context, so the model sees what the replay did), when:
//
//   - a step ends with another status than on the first host (ok, error,
//     skipped, denied) — a replayed step failed, or one that failed there
//     (and the model worked around) succeeds here. One exception: a step
//     with a condition that ran there and whose condition is false here is
//     skipped and the replay goes on: the plan itself says what to do then;
//   - a step skipped there for a false condition has a true one here: it
//     is not run, since what the model did next assumed it did not;
//   - a check_condition step gives another answer than there;
//   - before any step runs: a step's parameters hold the first host's own
//     value of a variable that differs here (web01 written where
//     {{inventory_hostname}} was meant; see hostSpecific). The model on the
//     first host is told its steps are replayed and to use the variables.
//
// The model's reading of free-form output cannot be compared; a task whose
// path depends on it should branch with conditions or check_condition.
// When the task fails on the first host, the others are not run.

// firstRun is the run of the first host, the one replayed.
type firstRun struct {
	host string
	res  stepgen.Result
	vars map[string]any // the first host's variables before any step
}

// varsOf is h's variables before any step: its vars map, copied.
func varsOf(h *batchHost) map[string]any {
	out := map[string]any{}
	for k, v := range h.h.Vars().Vars() {
		out[k] = v
	}
	return out
}

// planOnce runs the task with the model on the first host that can be
// reached, then replays it on the others. Up to --forks hosts are dialled
// at once to find the first: the first of them in inventory order that
// connects does the task (a host that does not answer costs one
// ConnectTimeout, not one per host), and the others keep their
// connections for the replay.
func (b *Batch) planOnce(ctx context.Context, t BatchTask) []HostResult {
	n := len(b.o.Hosts)
	results := make([]HostResult, n)
	done := make([]bool, n) // results[i] is set
	pre := make([]*batchHost, n)
	type dialling struct {
		i  int
		ch chan *batchHost
	}
	var later []dialling // dialled with the first, not waited for yet
	firstAt, next := -1, 0
	for firstAt < 0 && next < n && ctx.Err() == nil {
		k := min(b.o.Forks, n-next)
		chans := make([]chan *batchHost, k)
		for j := range k {
			ch := make(chan *batchHost, 1)
			chans[j] = ch
			h := b.o.Hosts[next+j]
			go func() { ch <- b.dial(ctx, h) }()
		}
		for j, ch := range chans {
			i := next + j
			if firstAt >= 0 {
				later = append(later, dialling{i, ch})
				continue
			}
			c := <-ch
			if c.err != nil {
				results[i], done[i] = b.runOn(ctx, c, nil), true
				continue
			}
			firstAt, pre[i] = i, c
		}
		next += k
	}
	var first *firstRun
	if firstAt >= 0 {
		results[firstAt] = b.runOn(ctx, pre[firstAt], func(ctx context.Context, h *batchHost, res *HostResult) error {
			vars := varsOf(h)
			r, err := b.runTask(ctx, h, t, true)
			res.How = "planned"
			taskResult(res, r)
			first = &firstRun{host: h.t.Name, res: r, vars: vars}
			return err
		})
		done[firstAt], pre[firstAt] = true, nil
	}
	for _, d := range later {
		if c := <-d.ch; c.err != nil {
			results[d.i], done[d.i] = b.runOn(ctx, c, nil), true
		} else {
			pre[d.i] = c
		}
	}
	var rest []int // hosts not done yet
	for i := range n {
		if !done[i] {
			rest = append(rest, i)
		}
	}
	skip := func(why string) {
		for _, i := range rest {
			results[i] = b.drop(b.o.Hosts[i], pre[i], why)
		}
	}
	switch {
	case ctx.Err() != nil:
		skip("interrupted")
	case first == nil: // no host could be reached
		skip("no host could be reached")
	case !first.res.Success || first.res.Err != nil:
		skip(fmt.Sprintf("--plan-once: the task failed on %s", first.host))
	default:
		if t.Planned != nil {
			t.Planned(first.res)
		}
		hosts := make([]Target, len(rest))
		conns := make([]*batchHost, len(rest))
		for j, i := range rest {
			hosts[j], conns[j] = b.o.Hosts[i], pre[i]
		}
		for j, r := range b.eachFrom(ctx, hosts, conns, b.replayWork(t, first)) {
			results[rest[j]] = r
		}
	}
	return results
}

// replayWork is the hostWork of the hosts after the first.
func (b *Batch) replayWork(t BatchTask, first *firstRun) hostWork {
	return func(ctx context.Context, h *batchHost, res *HostResult) error {
		res.How = "replayed"
		sum, why, err := replay(ctx, h, first)
		res.Steps = sum.Steps
		ev := event.Event{Kind: event.KindReplay, Replay: &event.Replay{From: first.host, Status: "followed", Steps: sum.Steps, Reason: why}}
		if err != nil {
			sum.Err = err
			h.event(ev)
			h.event(replayDone(sum))
			return err
		}
		if why == "" {
			h.event(ev)
			sum.Success = true
			h.event(replayDone(sum))
			res.Status = event.HostOK
			return nil
		}
		ev.Replay.Status = "diverged"
		h.event(ev)
		h.note(fmt.Sprintf("\nleft the plan of %s: %s — asking the model", first.host, why))
		res.How = "fallback"
		r, err := b.runTask(ctx, h, t, false)
		taskResult(res, r)
		return err
	}
}

// replayDone is the done event of a replay that did not fall back.
func replayDone(sum executor.Summary) event.Event {
	return sum.Event("replayed: " + sum.Text())
}

// replay runs first's steps on h until they are done or the host leaves
// the first host's path; why says how it left, "" when it followed. The
// error is one that broke the run (connection lost, Ctrl-C).
func replay(ctx context.Context, h *batchHost, first *firstRun) (sum executor.Summary, why string, err error) {
	exec := h.h.Executor()
	sum.Host, sum.Session = h.t.Name, h.h.Session
	ran := first.res.Ran
	if why := hostSpecific(first, h); why != "" {
		return sum, why, nil
	}
	pe := &event.Plan{Name: "plan of " + first.host, DryRun: exec.DryRun()}
	if p := first.res.Plan; p != nil {
		for _, ph := range p.Phases {
			pe.Phases = append(pe.Phases, executor.PhaseInfo(ph, 0))
		}
	}
	for _, rs := range ran {
		for i := range pe.Phases {
			if pe.Phases[i].Phase == rs.Phase.Phase {
				pe.Phases[i].Steps++
			}
		}
	}
	h.event(event.Event{Kind: event.KindPlan, Session: h.h.Session, Plan: pe})
	phase := 0
	for i, rs := range ran {
		st := rs.Step
		if rs.Phase.Phase != phase && rs.Phase.Phase != 0 {
			phase = rs.Phase.Phase
			info := rs.Phase
			h.event(event.Event{Kind: event.KindPhase, Phase: &info})
			exec.SetPhase(phase) // the steps' events name their phase
		}
		label := fmt.Sprintf("step %d (%s)", i+1, st.Tool)
		if rs.Status == execctx.StatusSkipped && st.Condition != "" {
			if ok, err := exec.Vars().Eval(st.Condition); err == nil && ok {
				return sum, fmt.Sprintf("%s was skipped on %s, but its condition %s is true here", label, first.host, st.Condition), nil
			}
		}
		r, err := exec.RunStep(ctx, st)
		sum.Count(r.Status)
		if err != nil {
			return sum, "", err
		}
		switch {
		case r.Status == rs.Status:
			if st.Tool == tools.CheckConditionName && r.Status == execctx.StatusOK {
				if there := rs.Answer; !reflect.DeepEqual(there, r.Output.Value) {
					return sum, fmt.Sprintf("%s: %v here, %v on %s", label, r.Output.Value, there, first.host), nil
				}
			}
		case rs.Status == execctx.StatusOK && r.Status == execctx.StatusSkipped && st.Condition != "":
			// The plan's own branch: not needed on this host.
		default:
			return sum, fmt.Sprintf("%s: %s here (%s), %s on %s", label, r.Status, clipText(r.Observation, 120), rs.Status, first.host), nil
		}
	}
	return sum, "", nil
}

// hostSpecific finds a step whose parameters (as the model wrote them,
// templates unresolved) hold the first host's own value of a variable —
// web01 where {{inventory_hostname}} was meant — that has another value
// on h: replayed there, the step would act on the first host's value. It
// returns why h leaves the plan, "" when no step does. Values shorter than
// minSpecific bytes, numbers and booleans are not looked for (they turn up
// in ordinary text).
func hostSpecific(first *firstRun, h *batchHost) string {
	hereVars := h.h.Vars().Vars()
	names := make([]string, 0, len(first.vars))
	for k := range first.vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, rs := range first.res.Ran {
		for _, s := range paramStrings(rs.Step.Parameters, nil) {
			for _, k := range names {
				there, ok := first.vars[k].(string)
				if !ok || len(there) < minSpecific || plainScalar(there) || !strings.Contains(s, there) {
					continue
				}
				here, _ := hereVars[k].(string)
				if here == there {
					continue
				}
				label := fmt.Sprintf("step %d (%s)", i+1, rs.Step.Tool)
				if HiddenVar(k) || redact.SecretKey(k) {
					return fmt.Sprintf("%s: its parameters hold %s's own value of %s, which differs here", label, first.host, k)
				}
				return fmt.Sprintf("%s: its parameters hold %s's own %s %q (%q here) instead of {{%s}}", label, first.host, k, there, here, k)
			}
		}
	}
	return ""
}

// minSpecific is the shortest variable value hostSpecific looks for.
const minSpecific = 4

// plainScalar reports whether s reads as a number or a boolean.
func plainScalar(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "none", "null":
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// paramStrings appends the strings in a step's parameters to out, map
// keys in sorted order.
func paramStrings(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = paramStrings(v[k], out)
		}
	case []any:
		for _, x := range v {
			out = paramStrings(x, out)
		}
	}
	return out
}
