package engine

import (
	"context"
	"fmt"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
)

// Resume is what a resumed run continues from (agent resume): the
// session as recorded, and what to do with a step whose outcome is
// unknown (it was running when agent stopped).
type Resume struct {
	Session *session.Session
	// RerunUnknown runs such a step again without asking; SkipUnknown
	// takes it as done (the operator checked). Otherwise a person is
	// asked, and without one the run stops there (denied).
	RerunUnknown, SkipUnknown bool
}

// PlanPoint is where a plan resumes on one host.
type PlanPoint struct {
	// From is the first step to run, 1-based over the plan's steps;
	// len(steps)+1 when every step completed.
	From int
	// Done are the completed steps' records, in order.
	Done []session.Record
	// Unknown is step From's start when it was running when agent
	// stopped: its outcome is not known.
	Unknown *session.Record
}

// PlanPointOf finds where p resumes on host in s: after the longest run of
// steps that completed (ok, skipped, or failed with ignore_errors). A step
// that failed or was denied runs again; one that was running is Unknown.
func PlanPointOf(s *session.Session, host string, p *planner.Plan) PlanPoint {
	pt := PlanPoint{From: 1}
	hp := s.Hosts[host]
	if hp == nil {
		return pt
	}
	steps := p.Steps()
	for pt.From <= len(steps) {
		r, ok := hp.Ended[pt.From]
		done := ok && !r.Interrupted && (r.Status == string(execctx.StatusOK) || r.Status == string(execctx.StatusSkipped) ||
			r.Status == string(execctx.StatusError) && steps[pt.From-1].IgnoreErrors)
		if !done {
			break
		}
		pt.Done = append(pt.Done, r)
		pt.From++
	}
	if st, ok := hp.Started[pt.From]; ok {
		if r, ended := hp.Ended[pt.From]; !ended || r.Interrupted {
			pt.Unknown = &st
		}
	}
	return pt
}

// ResumePlan runs p on the host from where the session r left it: the
// variables the completed steps saved are set again, completed steps are
// not run again, and a step whose outcome is unknown is shown and needs a
// person's approval (or r.RerunUnknown / r.SkipUnknown) before it runs
// again. Steps keep their numbers.
func (h *Host) ResumePlan(ctx context.Context, p *planner.Plan, r Resume) (executor.Summary, error) {
	pt := PlanPointOf(r.Session, h.Name, p)
	for _, st := range pt.Done {
		h.restoreStep(st)
	}
	if pt.Unknown != nil {
		run, reason, err := h.decideUnknown(ctx, *pt.Unknown, r)
		if err != nil || !run && !r.SkipUnknown {
			return h.stopUnknown(*pt.Unknown, reason, err)
		}
		if r.SkipUnknown {
			pt.From++
		}
	}
	if pt.From > 1 {
		h.warn(fmt.Sprintf("resuming session %s at step %d of %d", r.Session.ID, pt.From, len(p.Steps())))
	}
	h.exec.SkipSteps(pt.From - 1)
	return h.exec.RunPlan(ctx, planFrom(p, pt.From))
}

// decideUnknown shows the step whose outcome is unknown and says whether
// to run it again.
func (h *Host) decideUnknown(ctx context.Context, st session.Record, r Resume) (run bool, reason string, err error) {
	what := st.Command
	if what == "" {
		what = st.Path
	}
	h.warn(fmt.Sprintf("step %d (%s %s) was running when agent stopped: its outcome is unknown", st.Step, st.Tool, what))
	switch {
	case r.SkipUnknown:
		return false, "skipped: --skip-unknown", nil
	case r.RerunUnknown:
		return true, "run again: --rerun-unknown", nil
	}
	p := h.Approver().Prompter()
	if p == nil || h.Approver().Mode() == safety.ModeNever {
		return false, "its outcome is unknown and nobody can approve running it again (agent resume --rerun-unknown runs it, --skip-unknown takes it as done)", nil
	}
	d, err := p.Approve(ctx, safety.Request{Host: h.Name, Tool: st.Tool, Params: st.Params, Command: st.Command, Path: st.Path,
		Risk: safety.Assessment{Level: safety.High, Reasons: []string{"agent stopped while this step was running: it may have run, in part or whole"}}})
	if err != nil {
		if ctx.Err() != nil {
			return false, "interrupted", ctx.Err()
		}
		return false, "approval failed: " + err.Error(), nil
	}
	if !d.Allowed {
		return false, "denied by user", nil
	}
	return true, "approved by user", nil
}

// stopUnknown ends the run at the unknown step, denied.
func (h *Host) stopUnknown(st session.Record, reason string, err error) (executor.Summary, error) {
	res := executor.StepResult{Step: st.Step, Phase: st.Phase, Tool: st.Tool, Params: st.Params, Command: st.Command,
		Path: st.Path, Status: execctx.StatusDenied, Observation: "[denied: " + reason + "]"}
	sum := executor.Summary{Host: h.Name, Session: h.Session, Err: err}
	if err == nil {
		sum.Failed = &res
		sum.Count(res.Status)
		// Not recorded: the step stays unknown for the next resume.
		h.out.Emit(event.Event{Kind: event.KindStep, Host: h.Name, Session: h.Session, Step: &event.Step{
			Phase: st.Phase, Step: st.Step, Tool: st.Tool, Parameters: st.Params, Command: st.Command, Path: st.Path,
			Status: string(res.Status), Output: res.Observation, Decision: reason}})
	}
	h.sink.Emit(sum.Event(sum.Text()))
	return sum, err
}

// planFrom is p without its steps before from (1-based); phases left
// without steps are dropped.
func planFrom(p *planner.Plan, from int) *planner.Plan {
	out := *p
	out.Phases = nil
	n := 0
	for _, ph := range p.Phases {
		keep := ph
		keep.Steps = nil
		for _, st := range ph.Steps {
			n++
			if n >= from {
				keep.Steps = append(keep.Steps, st)
			}
		}
		if len(keep.Steps) > 0 {
			out.Phases = append(out.Phases, keep)
		}
	}
	return &out
}

// warn reports a message about the host for the person.
func (h *Host) warn(msg string) {
	h.sink.Emit(event.Event{Kind: event.KindWarning, Host: h.Name, Session: h.Session, Warning: &event.Warning{Text: msg}})
}

// skipFinished leaves out of a resumed batch the hosts the session
// finished: they are never run again.
func (b *Batch) skipFinished() error {
	var left []Target
	done := 0
	for _, t := range b.o.Hosts {
		if hp := b.o.Resume.Session.Hosts[t.Name]; hp != nil && hp.Finished() {
			done++
			continue
		}
		left = append(left, t)
	}
	if len(left) == 0 {
		return configf("session %s: every selected host finished; nothing to resume", b.o.Resume.Session.ID)
	}
	if done > 0 {
		b.emit(event.Event{Kind: event.KindWarning, Warning: &event.Warning{
			Text: fmt.Sprintf("resuming session %s: %d %s finished and not run again, %d to go", b.o.Resume.Session.ID, done, pluralHosts(done), len(left))}})
	}
	b.o.Hosts = left
	return nil
}
