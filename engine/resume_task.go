package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/stepgen"
)

// ResumeTask takes up task with the model on the host where the session r
// left it: the steps that ran go back into the context's history (what
// the model is shown) with the variables they saved, the plan and the
// phases closed are kept (no planning request when the plan was
// recorded), and the model is told that the run was interrupted and which
// step's outcome is unknown. That step is shown; if the model asks for it
// again, a person approves it first (or r.RerunUnknown).
func (h *Host) ResumeTask(ctx context.Context, chat planner.Chatter, o TaskOptions, task string, r Resume) (stepgen.Result, error) {
	hp := r.Session.Hosts[h.Name]
	if hp == nil || len(hp.Started) == 0 && len(hp.Ended) == 0 && hp.Plan == nil {
		return h.RunTask(ctx, chat, o, task) // it had not started here
	}
	note := []string{"This task was interrupted (agent stopped before it finished) and is now resumed."}
	last := h.restoreHistory(hp)
	h.exec.SkipSteps(last)
	if n := len(hp.Ended); n > 0 {
		note = append(note, fmt.Sprintf("The %d steps in the history below ran before the interruption: do not repeat what they did.", n))
	}
	rs := resumedPlan(hp)
	if u := hp.Unknown(); u != nil {
		what := unknownWhat(*u)
		h.warn(fmt.Sprintf("step %d (%s) was running when agent stopped: its outcome is unknown", u.Step, what))
		switch {
		case r.SkipUnknown:
			note = append(note, fmt.Sprintf("Step %d (%s) was running when agent stopped; the operator checked that it completed.", u.Step, what))
		default:
			note = append(note, fmt.Sprintf("Step %d (%s) was running when agent stopped: its outcome is unknown — it may have run in part, in whole, or not at all. "+
				"Check its effects before relying on them; running it again needs the operator's approval.", u.Step, what))
			if !r.RerunUnknown {
				h.exec.SetGuard(h.unknownGuard(*u))
				defer h.exec.SetGuard(nil)
			}
		}
	}
	if o.Environment == "" {
		env, err := stepgen.Environment(ctx, h.tr)
		if err != nil {
			return stepgen.Result{}, err
		}
		o.Environment = env
	}
	o.Environment += "\n\n" + strings.Join(note, " ")
	if h.rec != nil {
		chat = usageChatter{next: chat, log: h.rec, host: h.Name, model: modelOf(chat)}
	}
	return stepgen.Run(ctx, stepgen.Config{
		LLM: chat, Executor: h.exec, Mode: o.Mode, Transport: h.tr, Environment: o.Environment,
		MaxSteps: o.MaxSteps, Host: h.Name, Session: h.Session, Emit: h.sink, SendSecrets: o.SendSecrets, Secrets: h.redact.Set,
		Resume: rs,
	}, task)
}

// restoreHistory puts the steps hp recorded back into the host's context,
// with the variables they set; it returns the highest step number seen.
func (h *Host) restoreHistory(hp *session.HostProgress) int {
	last := 0
	for _, n := range slices.Collect(maps.Keys(hp.Started)) {
		last = max(last, n)
	}
	for _, st := range hp.Steps() {
		last = max(last, st.Step)
		h.restoreStep(st)
	}
	return last
}

// resumedPlan is the model's plan as recorded on the host, with the
// phases it closed; nil when no plan was recorded (agent stopped while
// planning: the task is planned again).
func resumedPlan(hp *session.HostProgress) *stepgen.Resumed {
	if hp.Plan == nil || len(hp.Plan.Phases) == 0 {
		return nil
	}
	rs := &stepgen.Resumed{Plan: &planner.Plan{Name: "task"}, From: -1}
	for i, ph := range hp.Plan.Phases {
		rs.Plan.Phases = append(rs.Plan.Phases, planner.Phase{Phase: ph.Phase, Goal: ph.Goal, Description: ph.Description, SuccessCriteria: ph.SuccessCriteria})
		text, ok := hp.Answers[ph.Phase]
		switch {
		case ok && rs.From < 0:
			rs.Closed = append(rs.Closed, fmt.Sprintf("Phase %d: %s", ph.Phase, text))
		case rs.From < 0:
			rs.From = i
		}
	}
	if rs.From < 0 {
		rs.From = len(rs.Plan.Phases)
	}
	return rs
}

func unknownWhat(u session.Record) string {
	switch {
	case u.Command != "":
		return u.Tool + ": " + u.Command
	case u.Path != "":
		return u.Tool + ": " + u.Path
	}
	return u.Tool
}

// unknownGuard asks a person before the step whose outcome is unknown
// runs again; without one it is refused, with the way out in the reason
// the model and the operator see.
func (h *Host) unknownGuard(u session.Record) func(ctx context.Context, req safety.Request) (safety.Decision, bool, error) {
	asked := false
	return func(ctx context.Context, req safety.Request) (safety.Decision, bool, error) {
		if asked || req.Tool != u.Tool || req.Command != u.Command || req.Path != u.Path {
			return safety.Decision{}, false, nil
		}
		p := h.Approver().Prompter()
		if p == nil || h.Approver().Mode() == safety.ModeNever {
			return safety.Decision{By: safety.ByPolicy, Reason: "this step was running when agent stopped and its outcome is unknown; " +
				"running it again needs the operator's approval (agent resume --rerun-unknown)"}, true, nil
		}
		asked = true
		req.Risk = safety.Assessment{Level: safety.High, Reasons: []string{"agent stopped while this step was running: it may have run, in part or whole"}}
		d, err := p.Approve(ctx, req)
		if err != nil && ctx.Err() != nil {
			return safety.Decision{Reason: "interrupted"}, true, ctx.Err()
		}
		if err != nil || !d.Allowed {
			return safety.Decision{By: safety.ByUser, Asked: err == nil, Reason: "running again a step whose outcome is unknown: denied by user"}, true, nil
		}
		return safety.Decision{}, false, nil // approved: the usual approval follows
	}
}
