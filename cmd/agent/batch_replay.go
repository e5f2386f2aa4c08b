package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	execctx "github.com/autoshell/agent/context"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
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

// planOnce runs the task with the model on the first host that can be
// reached, then replays it on the others. Up to --forks hosts are dialled
// at once to find the first: the first of them in inventory order that
// connects does the task (a host that does not answer costs one
// ConnectTimeout, not one per host), and the others keep their
// connections for the replay.
func (t *batchTask) planOnce(ctx context.Context) error {
	b := t.b
	n := len(b.hosts)
	results := make([]hostResult, n)
	done := make([]bool, n) // results[i] is set
	pre := make([]*hostConn, n)
	type dialling struct {
		i  int
		ch chan *hostConn
	}
	var later []dialling // dialled with the first, not waited for yet
	firstAt, next := -1, 0
	for firstAt < 0 && next < n && ctx.Err() == nil {
		k := min(b.o.forks, n-next)
		chans := make([]chan *hostConn, k)
		for j := range k {
			ch := make(chan *hostConn, 1)
			chans[j] = ch
			h := b.hosts[next+j]
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
		results[firstAt] = b.runOn(ctx, pre[firstAt], func(ctx context.Context, h *hostRun, res *hostResult) error {
			r, err := t.run(ctx, h, true)
			res.How = "planned"
			taskResult(res, r)
			first = &firstRun{host: h.host.Name, res: r, vars: h.vars}
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
			results[i] = b.drop(b.hosts[i], pre[i], why)
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
		if t.o.savePlan != "" {
			if err := savePlan(b.a.stderr, t.o.savePlan, first.res); err != nil {
				b.out.warn(err.Error())
			}
		}
		hosts := make([]inventoryHost, len(rest))
		conns := make([]*hostConn, len(rest))
		for j, i := range rest {
			hosts[j], conns[j] = b.hosts[i], pre[i]
		}
		for j, r := range b.eachFrom(ctx, hosts, conns, t.replayWork(first)) {
			results[rest[j]] = r
		}
	}
	return b.finish(ctx, results, sumCalls(results))
}

// replayWork is the hostWork of the hosts after the first.
func (t *batchTask) replayWork(first *firstRun) hostWork {
	return func(ctx context.Context, h *hostRun, res *hostResult) error {
		res.How = "replayed"
		sum, why, err := replay(ctx, h, first)
		res.Steps = sum.Steps
		ev := &replayEvent{Event: "replay", Host: h.host.Name, From: first.host, Status: "followed", Steps: sum.Steps, Reason: why}
		if err != nil {
			sum.Err = err
			h.sink.event(ev)
			t.replayDone(h, sum)
			return err
		}
		if why == "" {
			h.sink.event(ev)
			sum.Success = true
			t.replayDone(h, sum)
			res.Status = hostOK
			return nil
		}
		ev.Status = "diverged"
		h.sink.event(ev)
		h.sink.logNote(fmt.Sprintf("\nleft the plan of %s: %s — asking the model", first.host, why))
		res.How = "fallback"
		r, err := t.run(ctx, h, false)
		taskResult(res, r)
		return err
	}
}

// replayDone emits the done event of a replay that did not fall back.
func (t *batchTask) replayDone(h *hostRun, sum planner.Summary) {
	ev := &planner.DoneEvent{Event: planner.EventDone, Host: h.host.Name, Session: h.steps.session, Status: "failed",
		Summary: "replayed: " + sum.Text(), Steps: sum.Steps, OK: sum.OK, Errors: sum.Errors, Skipped: sum.Skipped, Denied: sum.Denied}
	if sum.Success {
		ev.Status = "success"
	}
	h.sink.event(ev)
	h.sink.finish(sum)
}

// replay runs first's steps on h until they are done or the host leaves
// the first host's path; why says how it left, "" when it followed. The
// error is one that broke the run (connection lost, Ctrl-C).
func replay(ctx context.Context, h *hostRun, first *firstRun) (sum planner.Summary, why string, err error) {
	sum.Host, sum.Session = h.host.Name, h.steps.session
	ran := first.res.Ran
	if why := hostSpecific(first, h); why != "" {
		return sum, why, nil
	}
	pe := &planner.PlanEvent{Event: planner.EventPlan, Host: h.host.Name, Session: h.steps.session,
		Plan: "plan of " + first.host, DryRun: h.steps.exec.DryRun}
	if p := first.res.Plan; p != nil {
		for _, ph := range p.Phases {
			pe.Phases = append(pe.Phases, planner.PhaseInfo{Phase: ph.Phase, Goal: ph.Goal, Description: ph.Description,
				SuccessCriteria: ph.SuccessCriteria})
		}
	}
	for _, rs := range ran {
		for i := range pe.Phases {
			if pe.Phases[i].Phase == rs.Phase.Phase {
				pe.Phases[i].Steps++
			}
		}
	}
	h.sink.event(pe)
	phase := 0
	for i, rs := range ran {
		st := rs.Step
		if rs.Phase.Phase != phase && rs.Phase.Phase != 0 {
			phase = rs.Phase.Phase
			h.sink.event(&planner.PhaseEvent{Event: planner.EventPhase, Host: h.host.Name, PhaseInfo: rs.Phase})
		}
		label := fmt.Sprintf("step %d (%s)", i+1, st.Tool)
		if rs.Status == execctx.StatusSkipped && st.Condition != "" {
			if ok, err := h.exec.Vars().Eval(st.Condition); err == nil && ok {
				return sum, fmt.Sprintf("%s was skipped on %s, but its condition %s is true here", label, first.host, st.Condition), nil
			}
		}
		r, err := h.exec.RunStep(ctx, st)
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
			return sum, fmt.Sprintf("%s: %s here (%s), %s on %s", label, r.Status, oneLineText(r.Observation, 120), rs.Status, first.host), nil
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
func hostSpecific(first *firstRun, h *hostRun) string {
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
				here, _ := h.vars[k].(string)
				if here == there {
					continue
				}
				label := fmt.Sprintf("step %d (%s)", i+1, rs.Step.Tool)
				if hiddenVar(k) || safety.SecretKey(k) {
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
