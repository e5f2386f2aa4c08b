package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autoshell/agent/audit"
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

	ran   bool            // the tool ran: its output may be saved
	files []safety.FileOp // what the tool does to Path (tools.Toucher)
}

// saves reports whether the step's save_output_as receives its output: it
// ran and succeeded, or it ran a command that exited non-zero.
func (r StepResult) saves() bool {
	return r.ran && (r.Status == execctx.StatusOK || r.Command != "" && r.Status == execctx.StatusError)
}

// RunStep runs one step, in this order:
//
//  1. its condition, over the variables: false → skipped (observation
//     "[skipped: condition … was false]"); an error → status error with
//     the message, never true or false;
//  2. {{var}} templating of the parameters (an unknown variable → error);
//  3. the parameters decoded into the tool's typed parameters, once
//     (tools.Registry.Prepare): everything below works on that call;
//  4. risk, on the resolved step: the command line a tools.Commander runs,
//     the files a tools.Toucher acts on (transfers are at least medium);
//  5. approval (with the diff of a file change when a person is asked);
//     denied → "[denied by safety policy: <reason>]", nothing runs. In a
//     dry run, medium and high steps are only previewed and skipped;
//  6. the tool, after the undo journal has stored the file it changes;
//  7. the record in Vars (save_output_as, last), the audit line, the
//     step event. save_output_as is set by a step that ran and succeeded,
//     or by a command that ran and exited non-zero (grep finding nothing
//     saves its empty output, as ignore_errors relies on); a tool that
//     failed (check_condition that could not evaluate, read_file of a
//     missing file) has no output to save, so the variable stays unset
//     and a later use is an unknown-variable error, never "".
//
// A tool's Go error (connection lost, interrupted) is returned and the
// run should stop; everything a model could fix is a StepResult with
// status error.
func (e *Executor) RunStep(ctx context.Context, st planner.Step) (StepResult, error) {
	if err := ctx.Err(); err != nil {
		return StepResult{}, err
	}
	e.n++
	start := time.Now()
	r := StepResult{Step: e.n, Phase: e.phase, Line: st.Line, Tool: st.Tool, Description: st.Description, Params: st.Parameters}
	if r.Params == nil {
		r.Params = map[string]any{}
	}
	if e.cfg.DryRun {
		if name := e.needsDryUnset(st); name != "" {
			r.Status, r.DryRun = execctx.StatusSkipped, true
			r.Observation = fmt.Sprintf("[skipped: dry run — needs %s, which a step not run in this dry run sets]", name)
			if st.SaveOutputAs != "" {
				e.dryUnset[st.SaveOutputAs] = true
			}
			return e.finish(ctx, st, r, start, nil)
		}
	}
	if st.Condition != "" {
		ok, err := e.vars.Eval(st.Condition)
		if err != nil {
			return e.fail(ctx, st, r, start, err.Error())
		}
		if !ok {
			r.Status = execctx.StatusSkipped
			r.Observation = "[skipped: condition " + st.Condition + " was false]"
			if e.cfg.RecordNeeds {
				// A replay elsewhere may run it: --save-plan's permissions
				// must allow it too.
				if r.Needs, r.NeedsKnown, err = e.skippedNeeds(ctx, st); err != nil {
					return e.finish(ctx, st, r, start, err)
				}
			}
			return e.finish(ctx, st, r, start, nil)
		}
	}
	params, err := e.vars.ResolveParams(st.Parameters, tools.ShellParameters[st.Tool]...)
	if err != nil {
		return e.fail(ctx, st, r, start, err.Error())
	}
	r.Params = params
	call, err := e.reg.Prepare(st.Tool, params)
	if err != nil {
		return e.fail(ctx, st, r, start, err.Error())
	}
	tr, as, err := e.stepTransport(st)
	if err != nil {
		return e.fail(ctx, st, r, start, err.Error())
	}
	r.As = as
	cls, err := e.classify(ctx, call, tr, as)
	if err != nil {
		return e.finish(ctx, st, r, start, err)
	}
	r.Command, r.Path, r.Risk, r.files = cls.command, cls.path, cls.risk, cls.files
	if cls.refused != nil {
		return e.fail(ctx, st, r, start, fmt.Sprintf("%s: %v", st.Tool, cls.refused))
	}
	e.emit(event.Event{Kind: event.KindStepStart, StepStart: &event.StepStart{Phase: r.Phase, Step: r.Step, Tool: st.Tool,
		Description: st.Description, Parameters: params, Command: r.Command, Path: r.Path, Risk: r.Risk.Level.String(), As: as}})
	why, needs, err := e.permitted(ctx, tr, call, cls)
	if err != nil {
		return e.finish(ctx, st, r, start, err)
	}
	r.Needs, r.NeedsKnown = needs.recorded, e.cfg.RecordNeeds
	if why == "" {
		why = e.readOnly(r.Risk, cls)
	}
	if why != "" {
		r.Status = execctx.StatusDenied
		r.Decision = safety.Decision{Reason: why, By: safety.ByPolicy}
		r.Observation = "[denied by safety policy: " + why + "]"
		return e.finish(ctx, st, r, start, nil)
	}

	if e.cfg.DryRun && r.Risk.Level > safety.Safe {
		return e.dryRun(ctx, st, r, start, call, tr)
	}
	if n := e.dryWrote[r.Path]; e.cfg.DryRun && n > 0 && slices.Contains(r.files, safety.FileRead) {
		r.Status, r.DryRun = execctx.StatusSkipped, true
		r.Observation = fmt.Sprintf("[skipped: dry run — would read the file written above by step %d, which this dry run did not run]", n)
		if st.SaveOutputAs != "" {
			e.dryUnset[st.SaveOutputAs] = true
		}
		return e.finish(ctx, st, r, start, nil)
	}
	req := safety.Request{Host: e.host, Tool: st.Tool, Params: params, Command: r.Command, Path: r.Path, Risk: r.Risk, As: as}
	if cls.show != "" {
		req.Path = cls.show
	}
	var previewed []tools.FileChange
	if e.mayAsk(r.Risk.Level) {
		if out, ok, err := e.preview(ctx, call, tr); err != nil {
			return e.finish(ctx, st, r, start, err)
		} else if ok {
			req.Diff, previewed = out.Diff, out.FilesChanged
		}
	}
	asked := time.Now()
	d, err := e.decide(ctx, req)
	// The time a person took to answer is not the step's: its duration is
	// the agent's and the tool's own time.
	start = start.Add(time.Since(asked))
	r.Decision = d
	if d.Asked {
		e.emit(event.Event{Kind: event.KindApproval, Approval: &event.Approval{Phase: r.Phase, Step: r.Step, Tool: st.Tool,
			Risk: r.Risk.Level.String(), Allowed: d.Allowed, Reason: d.Reason}})
	}
	if err != nil {
		r.Status = execctx.StatusDenied
		r.Observation = "[denied by safety policy: " + d.Reason + "]"
		return e.finish(ctx, st, r, start, err)
	}
	if !d.Allowed {
		r.Status = execctx.StatusDenied
		r.Observation = "[denied by safety policy: " + d.Reason + "]"
		return e.finish(ctx, st, r, start, nil)
	}

	// The journal reads and saves through tr, unconfined (agent's own
	// work); the tool runs through runOn, confined to the step's level.
	level := confineLevel(call.Name, r.Risk.Level, d, e.cfg.Approver.Mode())
	// Only tools that run a command line are confined: the others (file
	// tools, search) run in agent's process, their paths checked by the
	// policy (and the sandbox, below), and need the host's transport as it
	// is (directory listing, SFTP).
	runOn, err := tr, error(nil)
	if cls.command != "" {
		runOn, err = e.confined(ctx, tr, level)
	}
	if err != nil {
		r.Status = execctx.StatusDenied
		r.Observation = "[denied: " + err.Error() + "]"
		return e.finish(ctx, st, r, start, fmt.Errorf("step %d (%s): %w", r.Step, st.Tool, err))
	}
	confinedRun := runOn != tr
	if why, err := e.sandboxBlocks(ctx, tr, cls); err != nil {
		return e.finish(ctx, st, r, start, err)
	} else if why != "" {
		r.Status = execctx.StatusError
		r.Observation = why
		return e.finish(ctx, st, r, start, nil)
	}
	if len(cls.undo) > 0 {
		if err := e.journalShell(ctx, tr, as, cls.undo); err != nil {
			return e.fail(ctx, st, r, start, fmt.Sprintf("%s: %v; the command was refused because its changes could not be undone", st.Tool, err))
		}
		r.Journaled = targetPaths(cls.undo)
	}
	if call.Name == tools.ExecuteCommandName { // the structured tools' raw output is not what they report
		runOn = e.streaming(runOn, r.Phase, r.Step)
	}
	out, err := call.Run(expectPreviewed(ctx, previewed), runOn)
	if len(cls.undo) > 0 {
		if jerr := e.shellChanged(context.WithoutCancel(ctx), tr, cls.undo); jerr != nil {
			out.Observation = strings.TrimSpace(out.Observation + "\n[warning: " + jerr.Error() + "; undo will not notice later changes to it]")
		}
	}
	if confinedRun && err == nil && out.ExitCode != 0 {
		if why := e.cfg.Confiner.Explain(level, out.Stderr); why != "" {
			out.Observation = strings.TrimSpace(out.Observation + "\n" + why)
		}
	}
	var je *journalError
	switch {
	case errors.As(err, &je):
		return e.fail(ctx, st, r, start, fmt.Sprintf("%s: %v; the change was refused because it could not be undone", st.Tool, je.err))
	case err != nil:
		r.Status = execctx.StatusError
		r.Observation = "[ERROR]: " + err.Error()
		return e.finish(ctx, st, r, start, fmt.Errorf("step %d (%s): %w", r.Step, st.Tool, err))
	}
	r.Output, r.Observation, r.Diff, r.ran = out, out.Observation, out.Diff, true
	if err := e.journalChanged(ctx, cls, out); err != nil {
		r.Observation = strings.TrimSpace(r.Observation + "\n[warning: " + err.Error() + "; undo will not notice later changes to it]")
	}
	r.Status = execctx.StatusOK
	if out.IsError {
		r.Status = execctx.StatusError
	}
	e.touchFiles(ctx, tr, st.Tool, r, cls.local)
	return e.finish(ctx, st, r, start, nil)
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

// dryRun shows a medium or high step without running it.
func (e *Executor) dryRun(ctx context.Context, st planner.Step, r StepResult, start time.Time, call *tools.Call, tr transport.Transport) (StepResult, error) {
	r.Status, r.DryRun = execctx.StatusSkipped, true
	r.Observation = fmt.Sprintf("[skipped: dry run — %s risk step not run]", r.Risk.Level)
	if r.Path != "" && (slices.Contains(r.files, safety.FileWrite) || slices.Contains(r.files, safety.FileEdit)) {
		e.dryWrote[r.Path] = r.Step
	}
	out, ok, err := e.preview(ctx, call, tr)
	if err != nil {
		return e.finish(ctx, st, r, start, err)
	}
	if ok {
		r.Output, r.Diff = out, out.Diff
		if out.IsError {
			r.Observation += "\n" + out.Observation
		}
	}
	if st.SaveOutputAs != "" {
		e.dryUnset[st.SaveOutputAs] = true
	}
	return e.finish(ctx, st, r, start, nil)
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

// preview computes a file tool's change without making it; ok is false
// for tools that are not Previewers.
func (e *Executor) preview(ctx context.Context, call *tools.Call, tr transport.Transport) (tools.Output, bool, error) {
	out, ok, err := call.Preview(ctx, tr)
	if err != nil {
		return tools.Output{}, false, fmt.Errorf("preview step %d (%s): %w", e.n, call.Name, err)
	}
	return out, ok, nil
}

// fail ends the step with status error and a model-visible message.
func (e *Executor) fail(ctx context.Context, st planner.Step, r StepResult, start time.Time, msg string) (StepResult, error) {
	r.Status = execctx.StatusError
	r.Output = tools.ErrorOutput("%s", msg)
	r.Observation = r.Output.Observation
	return e.finish(ctx, st, r, start, nil)
}

// finish records the step in Vars, writes its audit line and emits its
// event. runErr is the run-stopping error, if any, returned as is unless
// the audit log fails too.
func (e *Executor) finish(ctx context.Context, st planner.Step, r StepResult, start time.Time, runErr error) (StepResult, error) {
	r.Duration = time.Since(start)
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
		By: r.Decision.By, Output: r.Observation, Duration: r.Duration, As: r.As}
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
	if red := e.cfg.Redact; red != nil {
		ent.Output, ent.Error = red(ent.Output), red(ent.Error)
		ent.Params, _ = event.RedactValue(ent.Params, red).(map[string]any)
		reasons := make([]string, len(ent.Risk.Reasons))
		for i, r := range ent.Risk.Reasons {
			reasons[i] = red(r)
		}
		ent.Risk.Reasons = reasons
	}
	if err := e.cfg.Audit.Append(ctx, ent); err != nil {
		return fmt.Errorf("step %d: %w", r.Step, err)
	}
	return nil
}

// fileAccesses lists the files on the target a step read or changed, for
// the context, as its tool declared them (tools.Toucher).
func fileAccesses(r StepResult) []execctx.FileAccess {
	if r.Status != execctx.StatusOK || r.Path == "" {
		return nil
	}
	var out []execctx.FileAccess
	for _, op := range r.files {
		switch op {
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
