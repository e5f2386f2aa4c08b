package stepgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Mode selects the loop.
type Mode string

// Modes.
const (
	// ModeAdaptive plans phases first, then asks for 1–3 steps at a time
	// per phase with a bounded summary of what has been done.
	ModeAdaptive Mode = "adaptive"
	// ModeReAct is one growing conversation with the step tools; a reply
	// without tool calls is the final answer.
	ModeReAct Mode = "react"
)

// ParseMode reads --mode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeAdaptive, ModeReAct:
		return m, nil
	case "":
		return ModeAdaptive, nil
	}
	return "", fmt.Errorf("unknown mode %q (want adaptive or react)", s)
}

// Defaults of the limits.
const (
	DefaultMaxSteps  = 50
	DefaultMaxRounds = 10 // requests per phase
)

// Config is what a run needs. LLM and Executor are required.
type Config struct {
	LLM      planner.Chatter
	Executor *executor.Executor
	Mode     Mode // default ModeAdaptive
	// Environment describes the target for the model; when empty it is
	// collected once through Transport (see Environment).
	Environment string
	Transport   transport.Transport
	// MaxSteps bounds the steps run (default DefaultMaxSteps); MaxRounds the
	// requests per phase in adaptive mode (default DefaultMaxRounds).
	MaxSteps, MaxRounds int
	// SummaryBudget is the size of the history summary in bytes (0: the
	// context package's default).
	SummaryBudget int
	// Host and Session name the run in events.
	Host, Session string
	// SendSecrets sends step outputs to the model without taking out what
	// redact's patterns find or the values they taught the set
	// (--send-secrets); the values of variables the model is not shown
	// (inventory secrets) and the set's Known values are withheld all the
	// same.
	SendSecrets bool
	// Secrets is the session's secret set: every text sent to the model
	// loses its values, in every shape (redact.Set); nil: the patterns
	// alone.
	Secrets *redact.Set
	// Emit receives this package's events; the Executor emits its own
	// (step_start, step) through its own config.
	Emit event.Sink
	// Resume continues an interrupted adaptive run (agent resume) without
	// planning again; nil: a new run.
	Resume *Resumed
}

// Resumed is where an interrupted adaptive run stood: its plan and the
// phases it closed. What its steps did is in the Executor's context (the
// history the model is shown), and what the model must know about the
// interruption in Environment.
type Resumed struct {
	Plan *planner.Plan
	// Closed are the closing texts of the phases done, in order ("Phase
	// N: text"; the plan has the goal); From is the index in Plan.Phases
	// of the first phase to run.
	Closed []string
	From   int
}

// ErrTaskFailed: the model's final answer (ReAct) or a phase's closing
// text began with FailedMarker — it reports that the task cannot be done.
// Wrapped with its reason; the run failed (exit 1).
var ErrTaskFailed = errors.New("the model reports the task failed")

// FailedMarker begins a final answer or closing text that reports failure;
// both modes' prompts tell the model so.
const FailedMarker = "FAILED:"

// failedReason returns the reason of a text that reports failure: one
// beginning with FailedMarker (any case, after Markdown emphasis).
func failedReason(text string) (string, bool) {
	t := strings.TrimLeft(strings.TrimSpace(text), "*_# ")
	if len(t) < len(FailedMarker) || !strings.EqualFold(t[:len(FailedMarker)], FailedMarker) {
		return "", false
	}
	reason := strings.TrimSpace(strings.TrimLeft(t[len(FailedMarker):], "*_ "))
	if reason == "" {
		reason = "no reason given"
	}
	return reason, true
}

// Result is how a run ended.
type Result struct {
	executor.Summary
	// Task is the task as given.
	Task string
	// Answer is the model's final text: the closing text of the last phase,
	// or the ReAct final answer.
	Answer string
	// Plan is the adaptive plan (nil in ReAct mode).
	Plan  *planner.Plan
	Usage llm.Usage
	// Ran is every step the executor decided on, in order, as the model
	// wrote it (templates and condition unresolved), with its outcome:
	// what --save-plan and --plan-once replay.
	Ran []RanStep
}

// RanStep is one step of a run and how it ended.
type RanStep struct {
	Phase  event.PhaseInfo // zero in ReAct mode
	Step   planner.Step
	Status execctx.Status
	// Needs is what the step needed of declared permissions, when the
	// executor recorded it (NeedsKnown; executor.Config.RecordNeeds).
	Needs      safety.Needs
	NeedsKnown bool
	// DryRun: the step was skipped only because of --dry-run.
	DryRun bool
	// Answer is a check_condition step's result (true or false) when it
	// ran; nil otherwise. The context's history does not keep it.
	Answer any
}

// Run drives task with the model until it is done, a limit stops it, or a
// Go error (the endpoint failed, the connection was lost, ctx ended) breaks
// it; in the last two cases the error is returned too. A done event and an
// llm event are emitted in every case. Failed steps are observations the
// model sees; denied ones too, and they make the run unsuccessful.
func Run(ctx context.Context, cfg Config, task string) (Result, error) {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = DefaultMaxRounds
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeAdaptive
	}
	r := &runner{cfg: cfg, exec: cfg.Executor, chat: &counter{next: cfg.LLM}, start: time.Now()}
	r.res.Host, r.res.Session, r.res.Task = cfg.Host, cfg.Session, task
	for _, f := range cfg.Executor.Registry().Schemas() {
		raw, err := json.Marshal(f.Parameters)
		if err != nil {
			return r.finish(fmt.Errorf("tool %s schema: %w", f.Name, err))
		}
		r.tools = append(r.tools, llm.Tool{Name: f.Name, Description: f.Description, Parameters: raw})
	}
	if r.cfg.Environment == "" && cfg.Transport != nil {
		env, err := Environment(ctx, cfg.Transport)
		if err != nil {
			return r.finish(err)
		}
		r.cfg.Environment = env
	}
	// the environment may carry an earlier task's variables and answers
	// (engine.Conversation): their secrets stay home too
	r.cfg.Environment, _ = r.scrub(r.cfg.Environment)
	var err error
	switch cfg.Mode {
	case ModeReAct:
		err = r.react(ctx, task)
	default:
		err = r.adaptive(ctx, task)
	}
	return r.finish(err)
}

type runner struct {
	cfg   Config
	exec  *executor.Executor
	chat  *counter
	tools []llm.Tool
	loop  loopDetector
	start time.Time
	// phaseNow is the adaptive phase being run.
	phaseNow event.PhaseInfo
	// offered are the tools adaptive requests offer: the task's
	// (taskTools), and those the model called without their being
	// offered.
	offered []llm.Tool
	res     Result
}

func (r *runner) emit(ev event.Event) {
	ev.Host, ev.Session = r.cfg.Host, r.cfg.Session
	r.cfg.Emit.Emit(ev)
}

// finish fills the result, emits the llm and done events.
func (r *runner) finish(err error) (Result, error) {
	s := &r.res.Summary
	s.Err, s.Duration = err, time.Since(r.start)
	s.Success = err == nil && s.Denied == 0
	r.res.Usage = r.chat.usage()
	r.emit(event.Event{Kind: event.KindLLM, LLM: &event.LLM{Calls: r.res.Usage.Calls, PromptTokens: r.res.Usage.Prompt, CompletionTokens: r.res.Usage.Completion}})
	text := s.Text()
	if err == nil && r.res.Answer != "" {
		text = oneLine(r.res.Answer, 300) + " (" + text + ")"
	}
	if err == nil && s.Denied > 0 {
		text += "; denied steps needed approval (--approve)"
	}
	r.emit(s.Event(text))
	return r.res, err
}

// thought emits what the model said beside its tool calls.
func (r *runner) thought(phase int, resp llm.Response) {
	text := strings.TrimSpace(resp.Reasoning)
	if c := strings.TrimSpace(resp.Content); c != "" && len(resp.ToolCalls) > 0 {
		text = strings.TrimSpace(text + "\n" + c)
	}
	if text != "" {
		r.emit(event.Event{Kind: event.KindThought, Thought: &event.Text{Phase: phase, Text: text}})
	}
}

// runCalls runs the tool calls of resp in order and returns exactly one
// tool message per call, in the same order. A problem call (unknown tool,
// bad arguments, beyond the third) is answered with its tool error and not
// run. The reasons say, one per call that did not succeed (not run,
// failed, denied), why; none when every step ran ok or was skipped by its
// condition. The error stops the run: a limit, or the executor's Go error;
// the messages are then incomplete and must not be sent.
func (r *runner) runCalls(ctx context.Context, resp llm.Response) ([]llm.Message, []string, error) {
	msgs := make([]llm.Message, 0, len(resp.ToolCalls))
	var reasons []string
	for i, tc := range resp.ToolCalls {
		which := fmt.Sprintf("call %d (%s)", i+1, tc.Name)
		if p, bad := resp.ProblemFor(tc.ID); bad {
			msgs = append(msgs, llm.ToolMessage(tc.ID, llm.ToolError(p)))
			reasons = append(reasons, which+" was not run: "+strings.ReplaceAll(p.Kind, "_", " "))
			continue
		}
		st, err := toStep(tc)
		if err != nil {
			msgs = append(msgs, llm.ToolMessage(tc.ID, "error: "+err.Error()))
			reasons = append(reasons, which+" was not run: bad arguments")
			continue
		}
		if st.Become && !r.exec.BecomeAll() {
			// Only the operator escalates: the model may ask for become
			// only in a run started with it.
			msgs = append(msgs, llm.ToolMessage(tc.ID, "error: become is not enabled for this run (the operator did not start it with --become); "+
				"run the step without become, or report that the task needs privileges"))
			continue
		}
		if r.res.Steps >= r.cfg.MaxSteps {
			return nil, nil, fmt.Errorf("%w: %d steps run (--max-steps %d) and the model still wants more", ErrMaxSteps, r.res.Steps, r.cfg.MaxSteps)
		}
		resolved, err := r.exec.Vars().ResolveParams(st.Parameters)
		if err != nil {
			resolved = st.Parameters
		}
		if r.loop.observe(st.Tool, resolved) {
			return nil, nil, r.loop.err()
		}
		res, err := r.exec.RunStep(ctx, st)
		r.res.Summary.Count(res.Status)
		if res.Status != "" {
			rs := RanStep{Phase: r.phaseNow, Step: st, Status: res.Status, DryRun: res.DryRun, Needs: res.Needs, NeedsKnown: res.NeedsKnown}
			if st.Tool == tools.CheckConditionName && res.Status == execctx.StatusOK {
				rs.Answer = res.Output.Value
			}
			r.res.Ran = append(r.res.Ran, rs)
		}
		if err != nil {
			return nil, nil, err
		}
		switch res.Status {
		case execctx.StatusOK, execctx.StatusSkipped:
		case execctx.StatusError:
			if !st.IgnoreErrors { // an expected failure is an observation: phase_done holds
				reasons = append(reasons, which+" failed")
			}
		default:
			reasons = append(reasons, which+" was "+string(res.Status))
		}
		// the output may hold secrets: they stay on the host (secrets.go)
		msgs = append(msgs, llm.ToolMessage(tc.ID, r.observation(res.Observation)))
	}
	return msgs, reasons, nil
}

// toStep turns a tool call into a step: the step keys description,
// save_output_as, condition, become and ignore_errors come out of the
// arguments (check_condition keeps its own condition parameter).
func toStep(tc llm.ToolCall) (planner.Step, error) {
	params := map[string]any{}
	if len(tc.Arguments) > 0 {
		if err := json.Unmarshal(tc.Arguments, &params); err != nil {
			return planner.Step{}, fmt.Errorf("the arguments of %s are not a JSON object: %v", tc.Name, err)
		}
	}
	if params == nil {
		params = map[string]any{}
	}
	st := planner.Step{Tool: tc.Name}
	take := func(key string) (string, error) {
		v, ok := params[key]
		if !ok {
			return "", nil
		}
		delete(params, key)
		switch v := v.(type) {
		case nil:
			return "", nil
		case string:
			return strings.TrimSpace(v), nil
		}
		return "", fmt.Errorf("%s of %s must be a string, not %v", key, tc.Name, v)
	}
	var err error
	if st.Description, err = take("description"); err != nil {
		return st, err
	}
	if st.SaveOutputAs, err = take("save_output_as"); err != nil {
		return st, err
	}
	if st.SaveOutputAs != "" {
		if err := execctx.ValidateName(st.SaveOutputAs); err != nil {
			return st, fmt.Errorf("save_output_as of %s: %v", tc.Name, err)
		}
	}
	if tc.Name != tools.CheckConditionName {
		if st.Condition, err = take("condition"); err != nil {
			return st, err
		}
	}
	for key, to := range map[string]*bool{"become": &st.Become, "ignore_errors": &st.IgnoreErrors} {
		v, ok := params[key]
		if !ok {
			continue
		}
		delete(params, key)
		switch v := v.(type) {
		case nil:
		case bool:
			*to = v
		default:
			return st, fmt.Errorf("%s of %s must be true or false, not %v", key, tc.Name, v)
		}
	}
	st.Parameters = params
	return st, nil
}

// counter counts the model's successful calls and tokens.
type counter struct {
	next planner.Chatter
	mu   sync.Mutex
	u    llm.Usage
}

func (c *counter) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := c.next.Chat(ctx, req)
	if err == nil {
		c.mu.Lock()
		c.u.Calls++
		c.u.Prompt += resp.Usage.Prompt
		c.u.Completion += resp.Usage.Completion
		c.mu.Unlock()
	}
	return resp, err
}

func (c *counter) usage() llm.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.u
}

func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}

// Errors of SavedPlan.
var (
	// ErrNothingToSave: no step of the run can be replayed.
	ErrNothingToSave = errors.New("no step to save")
	// ErrDryRunPlan: the run was a dry run, so the model chose its later
	// steps without seeing the earlier ones run.
	ErrDryRunPlan = errors.New("a dry run cannot be saved as a plan")
)

// SavedPlan returns the steps that ran as a plan that `agent run` replays
// without the model (what --save-plan writes and --plan-once replays):
//
//   - in adaptive mode one phase per phase of the run that kept a step,
//     with its goal, description and success criteria, numbered by position;
//     in ReAct mode one phase without a goal (top-level `steps`);
//   - every step as the model wrote it (templates, condition and
//     save_output_as unresolved, so the replay decides on the new host);
//   - ok and skipped steps are kept: a skipped step's condition may well be
//     true elsewhere;
//   - denied steps are left out: they did not run, so the run's end state
//     is the one without them;
//   - failed steps are left out — a failed step the model then corrected
//     must not be replayed, since a plan run stops at its first failed step
//     — unless a kept step uses its result: its save_output_as variable
//     (it was the latest step to set it) or `last` right after it. Such a
//     step is kept with ignore_errors: true and listed by FailedKept:
//     where it fails again (grep finding nothing), the replay records the
//     failure and goes on, as the run did.
//
// The plan is checked with planner.Validate (variables resolvable, names
// and conditions well-formed). A run without a step to keep returns an
// error wrapping ErrNothingToSave; a dry run (a step skipped only because
// of it) one wrapping ErrDryRunPlan — the model may have tried alternatives
// to steps it saw skipped, which a replay would all run.
//
// preset names the variables the replay will have before its first step
// (--var, the inventory's and inventory_hostname in a batch): steps that
// use them validate.
func (r Result) SavedPlan(preset []string) (*planner.Plan, error) {
	dry := 0
	for _, rs := range r.Ran {
		if rs.DryRun {
			dry++
		}
	}
	if dry > 0 {
		return nil, fmt.Errorf("%w: %d of its %d steps were only previewed; run the task without --dry-run to save it", ErrDryRunPlan, dry, len(r.Ran))
	}
	keep := r.keptSteps()
	p := &planner.Plan{Name: planName(r.Task)}
	last := -1 // the phase number of p.Phases[len-1]
	for i, rs := range r.Ran {
		if !keep[i] {
			continue
		}
		if len(p.Phases) == 0 || rs.Phase.Phase != last {
			last = rs.Phase.Phase
			p.Phases = append(p.Phases, planner.Phase{Goal: rs.Phase.Goal, Description: rs.Phase.Description,
				SuccessCriteria: rs.Phase.SuccessCriteria})
		}
		ph := &p.Phases[len(p.Phases)-1]
		st := copyStep(rs.Step)
		if rs.Status == execctx.StatusError {
			// kept for its result: a replay where it fails again records
			// the failure and goes on, as this run did
			st.IgnoreErrors = true
		}
		ph.Steps = append(ph.Steps, st)
	}
	if len(p.Phases) == 0 {
		if len(r.Ran) == 0 {
			return nil, fmt.Errorf("%w: the run decided on no step", ErrNothingToSave)
		}
		return nil, fmt.Errorf("%w: none of the %d steps of the run succeeded or was skipped", ErrNothingToSave, len(r.Ran))
	}
	for i := range p.Phases {
		p.Phases[i].Phase = i + 1
		if p.Phases[i].Goal == "" && len(p.Phases) > 1 {
			p.Phases[i].Goal = fmt.Sprintf("phase %d", i+1)
		}
	}
	if err := planner.Validate(p, nil, preset); err != nil {
		return nil, fmt.Errorf("the steps of the run do not make a valid plan: %w", err)
	}
	p.Permissions, _ = r.savedPermissions(keep)
	return p, nil
}

// PermissionsGap says why SavedPlan wrote no `permissions:` block although
// the run recorded what its steps needed; "" when it wrote one or nothing
// was recorded.
func (r Result) PermissionsGap() string {
	_, why := r.savedPermissions(r.keptSteps())
	return why
}

// savedPermissions are the tightest permissions the kept steps needed:
// nil when the run did not record them (why ""), or when one kept step's
// needs are not known or cannot be written as a list (why says so).
func (r Result) savedPermissions(keep []bool) (*safety.Permissions, string) {
	var all []safety.Needs
	recorded := false
	for i, rs := range r.Ran {
		recorded = recorded || rs.NeedsKnown
		if !keep[i] {
			continue
		}
		if !rs.NeedsKnown {
			return nil, fmt.Sprintf("what step %q (%s) needs is not known", oneLine(stepText(rs.Step), 60), rs.Step.Tool)
		}
		if names, _ := execctx.ParamVars(rs.Step.Parameters); len(names) > 0 {
			// What it needed here is one host's values ({{inventory_hostname}},
			// an earlier step's output): no list would hold on a fleet.
			return nil, fmt.Sprintf("step %q (%s) uses {{%s}}, whose value may differ where the plan is replayed; write the block by hand",
				oneLine(stepText(rs.Step), 60), rs.Step.Tool, names[0])
		}
		all = append(all, rs.Needs)
	}
	if !recorded {
		return nil, ""
	}
	p, why := safety.Needed(safety.MergeNeeds(all...))
	if p == nil {
		return nil, "a step's effects cannot be listed: " + why
	}
	p.Source = "the saved plan"
	return p, ""
}

// stepText names a step for messages: its command, file or tool.
func stepText(st planner.Step) string {
	if c, ok := st.Parameters["command"].(string); ok {
		return c
	}
	if f, ok := st.Parameters["file_path"].(string); ok {
		return f
	}
	return st.Tool
}

// FailedKept returns the failed steps SavedPlan keeps because a kept step
// uses their result.
func (r Result) FailedKept() []RanStep {
	var out []RanStep
	for i, k := range r.keptSteps() {
		if k && r.Ran[i].Status == execctx.StatusError {
			out = append(out, r.Ran[i])
		}
	}
	return out
}

// keptSteps marks the steps of r.Ran that SavedPlan keeps. One backward
// pass suffices: a step only depends on earlier ones.
func (r Result) keptSteps() []bool {
	keep := make([]bool, len(r.Ran))
	for i, rs := range r.Ran {
		keep[i] = rs.Status == execctx.StatusOK || rs.Status == execctx.StatusSkipped
	}
	for i := len(r.Ran) - 1; i >= 0; i-- {
		if !keep[i] {
			continue
		}
		for _, name := range stepVars(r.Ran[i].Step) {
			j := -1
			if name == execctx.LastVar {
				j = i - 1
			} else {
				for k := i - 1; k >= 0; k-- {
					if r.Ran[k].Step.SaveOutputAs == name && (r.Ran[k].Status == execctx.StatusOK || r.Ran[k].Status == execctx.StatusError) {
						j = k
						break
					}
				}
			}
			if j >= 0 && r.Ran[j].Status == execctx.StatusError {
				keep[j] = true
			}
		}
	}
	return keep
}

// stepVars lists the variables a step uses: in its parameters' templates,
// its condition and check_condition's condition parameter. Unparsable ones
// are left to planner.Validate to report.
func stepVars(st planner.Step) []string {
	names, _ := execctx.ParamVars(st.Parameters)
	conds := []string{st.Condition}
	if c, ok := st.Parameters["condition"].(string); ok && st.Tool == tools.CheckConditionName {
		conds = append(conds, c)
	}
	for _, c := range conds {
		if c == "" {
			continue
		}
		if vs, err := execctx.ConditionVars(c); err == nil {
			names = append(names, vs...)
		}
	}
	return names
}

// copyStep copies st deeply enough that the plan does not share maps with
// the result.
func copyStep(st planner.Step) planner.Step {
	st.Line = 0
	if st.Parameters != nil {
		st.Parameters = copyValue(st.Parameters).(map[string]any)
	}
	return st
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

// planName is the task on one line, clipped, as the saved plan's name.
func planName(task string) string {
	if strings.TrimSpace(task) == "" {
		return "task"
	}
	return oneLine(task, 200)
}
