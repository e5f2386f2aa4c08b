package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// StepResult is how one step ended.
type StepResult struct {
	Step  int // 1-based position in the run
	Phase int
	Line  int // in the plan file; 0 if unknown
	Tool  string
	// Description is the step's own.
	Description string
	// Params are the resolved parameters (as written when resolution
	// failed).
	Params map[string]any
	Status execctx.Status
	// Observation is the string the LLM sees (DESIGN.md "Observations").
	Observation string
	// Output is the tool's output when it ran (or was previewed).
	Output tools.Output
	// Command is the resolved shell line, Path the resolved file.
	Command, Path string
	Risk          safety.Assessment
	Decision      safety.Decision
	// As is the user the step ran as through become; "" for the login user.
	As string
	// DryRun: the step was not run because of --dry-run.
	DryRun   bool
	Diff     string
	Duration time.Duration
	// Journaled lists the files a shell command wrote that the undo
	// journal saved before it ran (agent undo restores them).
	Journaled []string
	// Needs is what the step needed of declared permissions (paths in the
	// step user's home written "~/…"), when Config.RecordNeeds is set;
	// NeedsKnown says it was worked out (a step that failed before its
	// risk was known, or whose condition was false and whose parameters
	// could not be resolved, has none).
	Needs      safety.Needs
	NeedsKnown bool

	ran bool // the tool ran: its output may be saved
	// shellBytes is what a shell command wrote to the files it was
	// journaled for: the new sizes of those it changed (nil: none
	// journaled, or a tool that reports its own).
	shellBytes *int64
	files      []safety.Touch // what a file tool does on the host (tools.Toucher)
}

// saves reports whether the step's save_output_as receives its output: it
// ran and succeeded, or it ran a command that exited non-zero.
func (r StepResult) saves() bool {
	return r.ran && (r.Status == execctx.StatusOK || r.Command != "" && r.Status == execctx.StatusError)
}

// RunStep runs one step through the stages of doc.go, in this order:
//
//  1. dry-run needs: in a dry run, a step that needs a variable a skipped
//     step would have set is skipped too;
//  2. condition, over the variables: false → skipped (observation
//     "[skipped: condition … was false]"); an error → status error with
//     the message, never true or false;
//  3. prepare: {{var}} templates (an unknown variable → error), the
//     parameters decoded into the tool's once (tools.Registry.Prepare),
//     the transport and the home of the user the step runs as;
//  4. classify: risk, on the prepared step (the command line a
//     tools.Commander runs, the files a tools.Toucher acts on), its files
//     looked at on the host once; then the step_start event;
//  5. permissions and --read-only: outside them → denied;
//  6. dry run: medium and high steps are only previewed and skipped;
//  7. preview and decide: approval (with the diff of a file change when a
//     person is asked); denied → "[denied by safety policy: <reason>]";
//  8. confine: the commands held to the step's level, the sandbox's
//     check of a file tool's file, and the level's rules on it
//     (levelRules);
//  9. journal: the undo journal stores what a command will change (and,
//     at medium, a new name directly in ~ it writes is created empty
//     first: homeNames);
//  10. run: the tool (a file tool journals its file itself, BeforeChange);
//  11. record: the output, the journal's new states, the session's files;
//
// then finish: the record in Vars (save_output_as, last), the audit line,
// the step event. save_output_as is set by a step that ran and succeeded,
// or by a command that ran and exited non-zero (grep finding nothing saves
// its empty output, as ignore_errors relies on); a tool that failed
// (check_condition that could not evaluate, read_file of a missing file)
// has no output to save, so the variable stays unset and a later use is an
// unknown-variable error, never "".
//
// A tool's Go error (connection lost, interrupted) is returned and the
// run should stop; everything a model could fix is a StepResult with
// status error.
func (e *Executor) RunStep(ctx context.Context, st planner.Step) (StepResult, error) {
	if err := ctx.Err(); err != nil {
		return StepResult{}, err
	}
	s := e.newStep(st)
	d := e.through(ctx, s, e.beforeDecide())
	if d == nil {
		d = e.through(ctx, s, e.beforeRun())
	}
	if d == nil {
		d = e.through(ctx, s, e.running())
	}
	return e.end(ctx, s, d)
}

// newStep numbers st and starts its run.
func (e *Executor) newStep(st planner.Step) *stepRun {
	e.n++
	s := &stepRun{st: st, start: time.Now(),
		r: StepResult{Step: e.n, Phase: e.phase, Line: st.Line, Tool: st.Tool, Description: st.Description, Params: st.Parameters}}
	if s.r.Params == nil {
		s.r.Params = map[string]any{}
	}
	return s
}

// The stages in RunStep's order, in three parts: up to the decision (a
// batch looks at the risk before a person could be asked), up to the
// tool's run, and the run with what follows it.
func (e *Executor) beforeDecide() []stage {
	return []stage{e.dryNeeds, e.condition, e.prepareStage, e.classifyStage, e.announce,
		e.permissions, e.readOnly, e.dryRunStage, e.preview}
}

func (e *Executor) beforeRun() []stage {
	return []stage{e.decideStage, e.confine, e.sandbox, e.levelRules, e.journal, e.homeNames, e.harvest}
}

func (e *Executor) running() []stage { return []stage{e.run, e.harvestRead, e.record} }

// through runs stages on s in turn until one ends the step.
func (e *Executor) through(ctx context.Context, s *stepRun, stages []stage) *denial {
	for _, stage := range stages {
		if d := stage(ctx, s); d != nil {
			return d
		}
	}
	return nil
}

// end finishes s, ended by d when d is not nil.
func (e *Executor) end(ctx context.Context, s *stepRun, d *denial) (StepResult, error) {
	if d == nil {
		return e.finish(ctx, s, nil)
	}
	d.apply(&s.r)
	return e.finish(ctx, s, d.err)
}

// stage is one step of RunStep: it reads and fills the step's run, and
// returns why the step ends there, or nil to go on.
type stage func(ctx context.Context, s *stepRun) *denial

// stepRun is a step as it goes through the stages.
type stepRun struct {
	st    planner.Step
	start time.Time
	r     StepResult
	p     *prepared // from prepare on
	// req is what the approver decides on; previewed the changes a person
	// approved (the tool refuses when a file changed since).
	req       safety.Request
	previewed []tools.FileChange
	// runOn is the transport the tool runs through (confined, streamed),
	// level the level its commands are held to.
	runOn transport.Transport
	level confine.Level
	// note is added to the observation of a step that ran (levelRules).
	note string
	// before is the journaled targets' state before the command ran.
	before map[string]beforeRun
	// audited: its audit line before the run was written.
	audited bool
	// out holds the events of a batch's step until the steps before it
	// ended (batch.go); nil: they are emitted as they come.
	out *heldEvents
	// batch and slot: its command is slot of a batch (batch.go).
	batch *transport.Batch
	slot  int
}

// dryNeeds skips, in a dry run, a step that needs a variable a step the
// dry run skipped would have set.
func (e *Executor) dryNeeds(_ context.Context, s *stepRun) *denial {
	if !e.cfg.DryRun {
		return nil
	}
	name := e.needsDryUnset(s.st)
	if name == "" {
		return nil
	}
	e.dryRunSkips(s)
	// Its parameters as far as they resolve now: a plan var shows its
	// value, not {{name}} (what is unset stays, and the note says why).
	if params, err := e.vars.ResolveParams(s.st.Parameters, tools.ShellParameters[s.st.Tool]...); err == nil {
		s.r.Params = params
	}
	return skip(fmt.Sprintf("[skipped: dry run — needs %s, which a step not run in this dry run sets]", name))
}

// dryRunSkips marks s skipped by the dry run: what it would save is unset.
func (e *Executor) dryRunSkips(s *stepRun) {
	s.r.DryRun = true
	if s.st.SaveOutputAs != "" {
		e.dryUnset[s.st.SaveOutputAs] = true
	}
}

// condition skips a step whose condition is false (working out what it
// would need, for --save-plan: a replay elsewhere may run it).
func (e *Executor) condition(ctx context.Context, s *stepRun) *denial {
	if s.st.Condition == "" {
		return nil
	}
	ok, err := e.vars.Eval(s.st.Condition)
	switch {
	case err != nil:
		return failed("%s", err.Error())
	case ok:
		return nil
	}
	d := skip("[skipped: condition " + s.st.Condition + " was false]")
	if e.cfg.RecordNeeds {
		s.r.Needs, s.r.NeedsKnown, d.err = e.skippedNeeds(ctx, s.st)
	}
	return d
}

// prepareStage is prepare as a stage.
func (e *Executor) prepareStage(ctx context.Context, s *stepRun) *denial {
	p, d := e.prepare(ctx, s.st)
	s.p, s.r.Params = p, p.params
	if p.tr != nil {
		s.r.As = p.as
	}
	return d
}

// classifyStage rates the prepared step; a path the policy refuses fails
// it.
func (e *Executor) classifyStage(ctx context.Context, s *stepRun) *denial {
	cls, err := e.classify(ctx, s.p)
	if err != nil {
		return broken(err)
	}
	s.p.cls = cls
	s.r.Command, s.r.Path, s.r.Risk, s.r.files = cls.command, cls.path, cls.risk, remote(cls.files)
	if cls.refused != nil {
		return failed("%s: %v", s.st.Tool, cls.refused)
	}
	return nil
}

// announce emits the step_start event of a classified step.
func (e *Executor) announce(_ context.Context, s *stepRun) *denial {
	r := &s.r
	e.emit(event.Event{Kind: event.KindStepStart, StepStart: &event.StepStart{Phase: r.Phase, Step: r.Step, Tool: s.st.Tool,
		Description: s.st.Description, Parameters: r.Params, Command: r.Command, Path: r.Path, Risk: r.Risk.Level.String(), As: r.As}})
	return nil
}

// dryRunStage shows, in a dry run, a medium or high step without running
// it, and skips a read of a file a skipped step would have written.
func (e *Executor) dryRunStage(ctx context.Context, s *stepRun) *denial {
	r := &s.r
	if !e.cfg.DryRun {
		return nil
	}
	if r.Risk.Level > safety.Safe {
		d := skip(fmt.Sprintf("[skipped: dry run — %s risk step not run]", r.Risk.Level))
		if r.Path != "" && (slices.ContainsFunc(r.files, writes)) {
			e.dryWrote[r.Path] = r.Step
		}
		out, ok, err := e.previewCall(ctx, s.p)
		if err != nil {
			return broken(err)
		}
		if ok {
			r.Output, r.Diff = out, out.Diff
			if out.IsError {
				d.reason += "\n" + out.Observation
			}
		}
		e.dryRunSkips(s)
		return d
	}
	if n := e.dryWrote[r.Path]; n > 0 && slices.ContainsFunc(r.files, reads) {
		e.dryRunSkips(s)
		return skip(fmt.Sprintf("[skipped: dry run — would read the file written above by step %d, which this dry run did not run]", n))
	}
	return nil
}

func writes(f safety.Touch) bool { return f.Writes() }

func reads(f safety.Touch) bool { return f.Op == safety.FileRead }

// preview builds what the approver decides on: with the diff of a file
// change when a person may be asked.
func (e *Executor) preview(ctx context.Context, s *stepRun) *denial {
	r := &s.r
	s.req = safety.Request{Host: e.host, Tool: s.st.Tool, Params: r.Params, Command: r.Command, Path: r.Path, Risk: r.Risk, As: r.As}
	if s.p.cls.show != "" {
		s.req.Path = s.p.cls.show
	}
	if !e.mayAsk(r.Risk.Level) {
		return nil
	}
	out, ok, err := e.previewCall(ctx, s.p)
	if err != nil {
		return broken(err)
	}
	if ok {
		s.req.Diff, s.previewed = out.Diff, out.FilesChanged
	}
	return nil
}

// decideStage asks the Guard, else the approver. A person's answer is
// reported as an approval event; the time they took is not the step's,
// and what the step's view knew of the host is forgotten (it may have
// changed meanwhile).
func (e *Executor) decideStage(ctx context.Context, s *stepRun) *denial {
	r := &s.r
	asked := time.Now()
	d, err := e.decide(ctx, s.req)
	s.start = s.start.Add(time.Since(asked))
	r.Decision = d
	if d.Asked {
		e.emit(event.Event{Kind: event.KindApproval, Approval: &event.Approval{Phase: r.Phase, Step: r.Step, Tool: s.st.Tool,
			Risk: r.Risk.Level.String(), Allowed: d.Allowed, Reason: d.Reason}})
		s.p.stale()
	}
	if err != nil || !d.Allowed {
		return &denial{kind: byApprover, reason: d.Reason, err: err}
	}
	if err := e.auditStart(ctx, *r); err != nil {
		// Fail closed: a step the audit log cannot record does not run.
		return &denial{kind: notAudited, reason: "the audit log cannot record this step, so it did not run: " + err.Error(),
			err: fmt.Errorf("step %d (%s) not run: %w", r.Step, s.st.Tool, err)}
	}
	s.audited = true
	return nil
}

// confine picks the transport the tool runs through. The journal reads
// and saves through the step's transport, unconfined (agent's own work);
// only tools that run a command line are confined: the others (file
// tools, search) run in agent's process, their paths checked by the
// policy (and the sandbox stage), and need the host's transport as it is
// (directory listing, SFTP).
func (e *Executor) confine(ctx context.Context, s *stepRun) *denial {
	p := s.p
	s.level = confineLevel(p.call.Name, s.r.Risk.Level, s.r.Decision, e.cfg.Approver.Mode())
	s.runOn = p.viewed()
	if p.cls.command == "" {
		return nil
	}
	runOn, err := e.confined(ctx, p.tr, s.level)
	if err != nil {
		return &denial{kind: notConfined, reason: err.Error(), err: fmt.Errorf("step %d (%s): %w", s.r.Step, s.st.Tool, err)}
	}
	s.runOn = runOn
	return nil
}

// journal saves what a command changes before it runs; a change undo
// could not take back is refused.
func (e *Executor) journal(ctx context.Context, s *stepRun) *denial {
	undo := s.p.cls.undo
	if len(undo) == 0 {
		return nil
	}
	s.before = map[string]beforeRun{}
	if err := e.journalShell(ctx, s.p.tr, s.r.As, undo, s.before); err != nil {
		return failed("%s: %v; the command was refused because its changes could not be undone", s.st.Tool, err)
	}
	s.r.Journaled = targetPaths(undo)
	return nil
}

// run runs the tool and records what the journal must know of what it
// left.
func (e *Executor) run(ctx context.Context, s *stepRun) *denial {
	p, r := s.p, &s.r
	runOn := s.runOn
	if p.call.Name == tools.ExecuteCommandName { // the structured tools' raw output is not what they report
		runOn = e.streaming(runOn, r.Phase, r.Step, s.out)
	}
	if e.cfg.Started != nil {
		ctx = transport.WithStarted(ctx, e.cfg.Started)
	}
	if s.batch != nil {
		ctx = transport.WithBatch(ctx, s.batch, s.slot)
	}
	reads := e.afterStates(p) // the targets' states read in the command's round trip
	runCtx := expectPreviewed(ctx, s.previewed)
	if reads != nil {
		runCtx = transport.WithAfterStates(runCtx, reads)
	}
	// The lines and records before the step on disk before it runs: on a
	// confined thread the command waits for them while the thread is
	// confined (wrapped.Run), anything else waits here.
	var dw *durableWait
	if durable := e.durable(); durable != nil && s.batch == nil { // a batch waited for it before it was sent
		if w, ok := s.runOn.(wrapped); ok && w.c.Thread != nil && p.call.Name == tools.ExecuteCommandName {
			dw = &durableWait{wait: durable}
			runCtx = context.WithValue(runCtx, durableKey{}, dw)
		} else if err := durable(); err != nil {
			return notDurable(r, s.st.Tool, err)
		}
	}
	out, err := p.call.Run(runCtx, runOn)
	if dw != nil && dw.err != nil {
		return notDurable(r, s.st.Tool, dw.err)
	}
	if len(p.cls.undo) > 0 {
		after, sizes, jerr := e.shellChanged(context.WithoutCancel(ctx), p.tr, p.cls.undo, hostStates(reads))
		r.shellBytes = bytesChanged(s.before, after, sizes)
		if jerr != nil {
			out.Observation = strings.TrimSpace(out.Observation + "\n[warning: " + jerr.Error() + "; undo will not notice later changes to it]")
		}
		if err == nil && out.ExitCode != 0 {
			if note := e.partialNote(context.WithoutCancel(ctx), p.tr, s.before, after); note != "" {
				out.Observation = strings.TrimSpace(out.Observation + "\n" + note)
			}
		}
	}
	if cf := e.confinerFor(p.tr); s.runOn != p.tr && p.cls.command != "" && err == nil && out.ExitCode != 0 && cf != nil {
		if why := cf.Explain(s.level, out.Stderr); why != "" {
			out.Observation = strings.TrimSpace(out.Observation + "\n" + why)
		}
	}
	var je *journalError
	switch {
	case errors.As(err, &je):
		return failed("%s: %v; the change was refused because it could not be undone", s.st.Tool, je.err)
	case err != nil:
		r.Status = execctx.StatusError
		r.Observation = "[ERROR]: " + err.Error()
		return broken(fmt.Errorf("step %d (%s): %w", r.Step, s.st.Tool, err))
	}
	r.Output, r.Observation, r.Diff, r.ran = out, out.Observation, out.Diff, true
	if s.note != "" && (p.cls.command != "" || !out.IsError) {
		r.Observation = strings.TrimSpace(r.Observation + "\n" + s.note)
	}
	return nil
}

// record notes what the tool changed in the journal, the step's status,
// and the files it touched in the session's index.
func (e *Executor) record(ctx context.Context, s *stepRun) *denial {
	r := &s.r
	if err := e.journalChanged(ctx, s.p.cls, r.Output); err != nil {
		r.Observation = strings.TrimSpace(r.Observation + "\n[warning: " + err.Error() + "; undo will not notice later changes to it]")
	}
	r.Status = execctx.StatusOK
	if r.Output.IsError {
		r.Status = execctx.StatusError
	}
	e.touchFiles(ctx, s.p, *r)
	return nil
}

// needsDryUnset returns a variable the step uses that a step skipped by
// the dry run would have set, or "".
func (e *Executor) needsDryUnset(st planner.Step) string {
	if len(e.dryUnset) == 0 {
		return ""
	}
	names, _ := execctx.ParamVars(st.Parameters)
	if st.Condition != "" {
		cv, _ := execctx.ConditionVars(st.Condition)
		names = append(names, cv...)
	}
	if c, ok := st.Parameters["condition"].(string); ok && st.Tool == tools.CheckConditionName {
		cv, _ := execctx.ConditionVars(c)
		names = append(names, cv...)
	}
	for _, n := range names {
		if e.dryUnset[n] {
			return n
		}
	}
	return ""
}

// mayAsk reports whether the approver may put a step of level l to a
// person, so that the diff of a file change is worth computing.
func (e *Executor) mayAsk(l safety.Level) bool {
	switch m := e.cfg.Approver.Mode(); {
	case l == safety.Safe, m == safety.ModeNever, m == safety.ModeAll:
		return false
	case m == safety.ModeMedium:
		return l == safety.High
	}
	return true
}

// previewCall computes a file tool's change without making it; ok is
// false for tools that are not Previewers.
func (e *Executor) previewCall(ctx context.Context, p *prepared) (tools.Output, bool, error) {
	out, ok, err := p.call.Preview(ctx, p.viewed())
	if err != nil {
		return tools.Output{}, false, fmt.Errorf("preview step %d (%s): %w", e.n, p.call.Name, err)
	}
	return out, ok, nil
}

// fail ends r with status error and a model-visible message.
func (r *StepResult) fail(msg string) {
	r.Status = execctx.StatusError
	r.Output = tools.ErrorOutput("%s", msg)
	r.Observation = r.Output.Observation
}

// finish records the step in Vars, writes its audit line and emits its
// event. runErr is the run-stopping error, if any, returned as is unless
// the audit log fails too.
func (e *Executor) finish(ctx context.Context, s *stepRun, runErr error) (StepResult, error) {
	st, r := s.st, s.r
	r.Duration = time.Since(s.start)
	r.Observation = escapeInvalidUTF8(r.Observation)
	if r.Status == "" {
		r.Status = execctx.StatusError
	}
	rec := execctx.StepRecord{
		Tool: st.Tool, Description: st.Description, Params: r.Params, Status: r.Status,
		ExitCode: r.Output.ExitCode, Stdout: r.Output.Stdout, Stderr: r.Output.Stderr, Output: r.Observation,
		Duration: r.Duration, Files: fileAccesses(r),
	}
	if r.saves() {
		rec.SaveAs = st.SaveOutputAs
	}
	if r.DryRun {
		rec.Stdout, rec.Stderr, rec.ExitCode = "", "", 0
	}
	if b, ok := r.Output.Value.(bool); ok && !r.DryRun {
		rec.Value = b
	}
	var errs []error
	if runErr != nil {
		errs = append(errs, runErr)
	}
	if err := e.vars.Record(rec); err != nil && r.Status == execctx.StatusOK {
		r.Status = execctx.StatusError
		r.Observation = strings.TrimSpace(r.Observation + "\n[ERROR]: " + err.Error())
	}
	if err := e.audit(ctx, r, runErr); err != nil {
		errs = append(errs, err)
	}
	ev := &event.Step{Phase: r.Phase, Step: r.Step, Line: r.Line, Tool: r.Tool,
		Description: r.Description, Parameters: r.Params, Status: string(r.Status), ExitCode: r.Output.ExitCode,
		Output: r.Observation, DurationMS: r.Duration.Milliseconds(), Command: r.Command, Path: r.Path,
		Reasons: r.Risk.Reasons, Decision: r.Decision.Reason, Diff: r.Diff, DryRun: r.DryRun, Journaled: r.Journaled, As: r.As}
	if r.Command != "" || r.Path != "" || r.Decision.Reason != "" {
		ev.Risk = r.Risk.Level.String()
	}
	if rec.SaveAs != "" {
		ev.SavedAs = st.SaveOutputAs
	}
	ev.Interrupted = runErr != nil && errors.Is(runErr, context.Canceled)
	e.emit(event.Event{Kind: event.KindStep, Step: ev})
	return r, errors.Join(errs...)
}

func (e *Executor) audit(ctx context.Context, r StepResult, runErr error) error {
	if e.cfg.Audit == nil {
		return nil
	}
	ent := audit.Entry{Session: e.cfg.Session, Host: e.host, Tool: r.Tool, Params: r.Params, Risk: r.Risk,
		By: r.Decision.By, Output: r.Observation, Duration: r.Duration, As: r.As,
		Command: r.Command, Path: r.Path, Approval: r.Decision.Reason}
	switch {
	case r.Status == execctx.StatusDenied:
		ent.Decision = audit.Denied
	case r.Status == execctx.StatusSkipped:
		ent.Decision = audit.Skipped
	case r.Decision.Allowed:
		ent.Decision = audit.Allowed
		code := r.Output.ExitCode
		ent.ExitCode = &code
	default:
		// Not run: the step failed before approval (condition,
		// templating, parameters, a refused path).
		ent.Decision = audit.Skipped
		ent.Error = strings.TrimPrefix(r.Observation, "[ERROR]: ")
	}
	if runErr != nil {
		ent.Error = runErr.Error()
	}
	if r.ran && (len(r.Journaled) > 0 || r.Diff != "") {
		ent.Undo = e.cfg.Session
	}
	if r.ran && !r.DryRun && len(r.Output.FilesChanged) > 0 {
		var n int64
		for _, fc := range r.Output.FilesChanged {
			n += fc.Size
		}
		ent.BytesChanged = &n
	} else if r.ran && !r.DryRun && r.shellBytes != nil {
		ent.BytesChanged = r.shellBytes
	}
	// Its fsync runs behind: the next line (the next step's start) waits
	// for it, so no step runs before this line is on disk. In a batch run
	// in turn the commands after it started already: its fsync waits for
	// the batch's next chunk (startChunk), one for all the lines before.
	appendEnd := e.cfg.Audit.AppendBehind
	if e.deferAudit {
		appendEnd = e.cfg.Audit.AppendDeferred
	}
	if err := appendEnd(ctx, e.redactEntry(ent)); err != nil {
		return fmt.Errorf("step %d: %w", r.Step, err)
	}
	return nil
}

// auditStart writes the line of an allowed step about to run: what will
// run, where, as whom, approved by whom. When it cannot be written the
// step must not run (fail closed).
func (e *Executor) auditStart(ctx context.Context, r StepResult) error {
	if e.cfg.Audit == nil {
		return nil
	}
	ent := audit.Entry{Session: e.cfg.Session, Host: e.host, Tool: r.Tool, Params: r.Params, Risk: r.Risk,
		By: r.Decision.By, As: r.As, Command: r.Command, Path: r.Path, Approval: r.Decision.Reason, Decision: audit.Started}
	return e.cfg.Audit.AppendUnsynced(ctx, e.redactEntry(ent))
}

// redactEntry scrubs the host's secrets (inventory, vault, become
// password) from what the audit line holds; the log redacts the
// well-known shapes itself.
func (e *Executor) redactEntry(ent audit.Entry) audit.Entry {
	red := e.cfg.Redact
	if red == nil {
		return ent
	}
	ent.Output, ent.Error, ent.Command, ent.Path, ent.Approval = red(ent.Output), red(ent.Error), red(ent.Command), red(ent.Path), red(ent.Approval)
	ent.Params, _ = event.RedactValue(ent.Params, red).(map[string]any)
	reasons := make([]string, len(ent.Risk.Reasons))
	for i, r := range ent.Risk.Reasons {
		reasons[i] = red(r)
	}
	ent.Risk.Reasons = reasons
	return ent
}

// fileAccesses lists the files on the target a step read or changed, for
// the context, as its tool declared them (tools.Toucher).
func fileAccesses(r StepResult) []execctx.FileAccess {
	if r.Status != execctx.StatusOK || r.Path == "" {
		return nil
	}
	var out []execctx.FileAccess
	for _, f := range r.files {
		switch f.Op {
		case safety.FileRead:
			out = append(out, execctx.FileAccess{Op: execctx.FileRead, Path: r.Path})
		case safety.FileWrite:
			out = append(out, execctx.FileAccess{Op: execctx.FileWritten, Path: r.Path})
		case safety.FileEdit:
			out = append(out, execctx.FileAccess{Op: execctx.FileEdited, Path: r.Path})
		}
	}
	return out
}

// oneLine shortens s to one line of at most n bytes for summaries.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// durable is what the step waits for before it runs: the audit lines
// whose fsync runs behind (audit.Log.CaughtUp) and the step's start
// record (Config.Durable); nil when there is neither.
func (e *Executor) durable() func() error {
	a, d := e.cfg.Audit, e.cfg.Durable
	if a == nil && d == nil {
		return nil
	}
	return func() error {
		if a != nil {
			if err := a.CaughtUp(); err != nil {
				return err
			}
		}
		if d != nil {
			return d()
		}
		return nil
	}
}

// durableKey carries a *durableWait to wrapped.Run.
type durableKey struct{}

// durableWait is durable for wrapped.Run to wait for, and its failure
// (then the command did not start).
type durableWait struct {
	wait func() error
	err  error
}

// notDurable is the denial of a step whose audit lines or start record
// could not be put on disk: it did not run (fail closed).
func notDurable(r *StepResult, tool string, err error) *denial {
	return &denial{kind: notAudited, reason: "the audit log cannot record this step, so it did not run: " + err.Error(),
		err: fmt.Errorf("step %d (%s) not run: %w", r.Step, tool, err)}
}
