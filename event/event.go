// Package event is the one vocabulary of everything a run reports: the
// plan and its phases, each step (as it starts and as it ends), approvals
// a person gave, the model's thoughts, answers and usage, re-planning, a
// --plan-once replay, a host's end and a batch's summary. The executor,
// the step generator and the engine emit Events; every front end (the
// terminal, --json, --out logs, later MCP progress) renders the same
// stream. Nothing here does I/O.
package event

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Kind says what an Event reports; it is the value of the "event" key.
type Kind string

// Kinds.
const (
	KindPlan      Kind = "plan"
	KindPhase     Kind = "phase"
	KindStepStart Kind = "step_start"
	KindStep      Kind = "step"
	KindApproval  Kind = "approval"
	KindDone      Kind = "done"
	KindThought   Kind = "thought"
	KindAnswer    Kind = "answer"
	KindLLM       Kind = "llm"
	KindReplan    Kind = "replan"
	KindReplay    Kind = "replay"
	KindBatch     Kind = "batch"
	// KindOutput is a piece of a running command's output, as it arrives
	// (whole lines where it can), before the step's own event.
	KindOutput Kind = "output"
	// KindHost ends a host of a batch with its result, after its done
	// event; KindWarning is a message for the person. Neither is part of
	// the --json stream (its per-host end is the done event; warnings go
	// to stderr).
	KindHost    Kind = "host"
	KindWarning Kind = "warning"
)

// Event is one thing a run reports. Kind says which; exactly the payload
// field of that kind is set. Host is the host it happened on where there
// is one (every kind but batch), Session the run's session.
//
// Each kind marshals to one JSON object with an "event" key
// (DESIGN.md, "Events and output"); see MarshalJSON for the layout.
type Event struct {
	Kind    Kind
	Host    string
	Session string

	Plan      *Plan
	Phase     *PhaseInfo
	StepStart *StepStart
	Step      *Step
	Approval  *Approval
	Done      *Done
	Thought   *Text
	Answer    *Answer
	LLM       *LLM
	Replan    *Replan
	Replay    *Replay
	Batch     *Batch
	HostEnd   *HostEnd
	Warning   *Warning
	Output    *Output
}

// Sink receives events, synchronously, in the order they happen on a host.
type Sink func(Event)

// Emit calls s with ev when s is not nil.
func (s Sink) Emit(ev Event) {
	if s != nil {
		s(ev)
	}
}

// PhaseInfo describes one phase: in a plan event, and as a phase event.
type PhaseInfo struct {
	Phase           int    `json:"phase"`
	Goal            string `json:"goal,omitempty"`
	Description     string `json:"description,omitempty"`
	SuccessCriteria string `json:"success_criteria,omitempty"`
	Steps           int    `json:"steps"`
}

// Plan starts a plan (a plan file, the model's phases, a replay): its
// phases.
type Plan struct {
	Name   string      `json:"plan,omitempty"`
	DryRun bool        `json:"dry_run,omitempty"`
	Phases []PhaseInfo `json:"phases"`
}

// StepStart announces a step that is about to be approved and run, with
// its parameters resolved (a renderer shows it and a spinner).
type StepStart struct {
	Phase       int            `json:"phase"`
	Step        int            `json:"step"` // 1-based position in the run
	Tool        string         `json:"tool"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Command     string         `json:"command,omitempty"`
	Path        string         `json:"path,omitempty"`
	Risk        string         `json:"risk"`
	// As is the user the step runs as through become (sudo); "" for the
	// login user.
	As string `json:"as,omitempty"`
}

// Output is a piece of what a running step's command printed, in full:
// the step event's output is bounded, the output events of a step hold
// every byte (split at line ends where lines allow).
type Output struct {
	Phase  int    `json:"phase"`
	Step   int    `json:"step"`
	Stream string `json:"stream"` // stdout or stderr
	Data   string `json:"data"`
}

// Step is a finished step, whatever its status.
type Step struct {
	Phase       int            `json:"phase"`
	Step        int            `json:"step"`
	Line        int            `json:"line,omitempty"` // in the plan file
	Tool        string         `json:"tool"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"` // resolved when resolution succeeded
	// Status is ok, error, skipped or denied.
	Status     string   `json:"status"`
	ExitCode   int      `json:"exit_code"`
	Output     string   `json:"output"` // the observation
	DurationMS int64    `json:"duration_ms"`
	Command    string   `json:"command,omitempty"` // the resolved shell line
	Path       string   `json:"path,omitempty"`    // the resolved file
	Risk       string   `json:"risk,omitempty"`
	Reasons    []string `json:"reasons,omitempty"`
	Decision   string   `json:"decision,omitempty"` // the approval's reason
	Diff       string   `json:"diff,omitempty"`     // file change (done, or would be in a dry run)
	DryRun     bool     `json:"dry_run,omitempty"`  // not run: --dry-run
	SavedAs    string   `json:"saved_as,omitempty"`
	// Journaled are the files a shell command wrote whose previous state
	// the undo journal saved (agent undo restores them).
	Journaled []string `json:"journaled,omitempty"`
	// Interrupted: the run was cancelled (Ctrl-C) while the step ran; its
	// exit code means nothing.
	Interrupted bool `json:"interrupted,omitempty"`
	// As is the user the step ran as through become; "" for the login user.
	As string `json:"as,omitempty"`
}

// Approval is a person's answer to a step that needed one (emitted only
// when someone was asked, before the step's own event).
type Approval struct {
	Phase   int    `json:"phase"`
	Step    int    `json:"step"`
	Tool    string `json:"tool"`
	Risk    string `json:"risk"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
}

// Done ends the work on a host.
type Done struct {
	// Status is success or failed.
	Status  string `json:"status"`
	Summary string `json:"summary"`
	Steps   int    `json:"steps"`
	OK      int    `json:"ok"`
	Errors  int    `json:"errors"`
	Skipped int    `json:"skipped"`
	Denied  int    `json:"denied"`
	// FailedStep is the 1-based step that stopped the plan; 0 if none.
	FailedStep int `json:"failed_step,omitempty"`
	// Text counts the steps on one line (executor.Summary.Text) for a
	// terminal's closing line; "" when no step ran. Not in the JSON, whose
	// summary already says it.
	Text string `json:"-"`
}

// Text is what the model said beside its tool calls: its reasoning
// (DeepSeek reasoning_content, a <think> block) or its text.
type Text struct {
	Phase int    `json:"phase,omitempty"`
	Text  string `json:"text"`
}

// Answer is the model's text without tool calls: it closes a phase
// (adaptive) or is the final answer (Final).
type Answer struct {
	Phase int    `json:"phase,omitempty"`
	Text  string `json:"text"`
	Final bool   `json:"final,omitempty"`
}

// LLM is the model usage of a run. PerHost is set in a batch, where each
// host's usage is reported on its own; it is written as the "host" key.
type LLM struct {
	Calls            int    `json:"calls"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	PerHost          string `json:"host,omitempty"`
}

// Replan says the rest of the plan was replaced because a phase could not
// succeed.
type Replan struct {
	Phase  int    `json:"phase"`
	Reason string `json:"reason"`
}

// Replay tells how a --plan-once replay went on a host: "followed" (every
// step ended as on the first host) or "diverged" (the host then falls back
// to the model).
type Replay struct {
	From   string `json:"from"` // the host the plan came from
	Status string `json:"status"`
	Steps  int    `json:"steps"`
	Reason string `json:"reason,omitempty"`
}

// Batch is the last event of a batch run.
type Batch struct {
	Hosts      int   `json:"hosts"`
	OK         int   `json:"ok"`
	Failed     int   `json:"failed"`
	NotRun     int   `json:"not_run"`
	LLMCalls   int   `json:"llm_calls"`
	DurationMS int64 `json:"duration_ms"`
}

// Host statuses of a batch.
const (
	HostOK     = "ok"
	HostFailed = "failed"
	HostNotRun = "not run"
)

// HostEnd is how the work ended on one host of a batch.
type HostEnd struct {
	Status string `json:"status"` // HostOK, HostFailed or HostNotRun
	// How is plan, adaptive, react, planned, replayed or fallback; "" when
	// the host was not connected.
	How     string `json:"how,omitempty"`
	Steps   int    `json:"steps"`
	Changed int    `json:"changed"` // files changed
	// LLMCalls are the model's calls made for this host.
	LLMCalls   int    `json:"llm_calls,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Err        string `json:"error,omitempty"`
}

// Warning is a message for the person; LogOnly ones belong in the host's
// log (--out) only.
type Warning struct {
	Text    string `json:"text"`
	LogOnly bool   `json:"log_only,omitempty"`
}

// payload returns the kind's payload, nil when it is missing.
func (e Event) payload() any {
	switch e.Kind {
	case KindPlan:
		return nilIf(e.Plan)
	case KindPhase:
		return nilIf(e.Phase)
	case KindStepStart:
		return nilIf(e.StepStart)
	case KindStep:
		return nilIf(e.Step)
	case KindApproval:
		return nilIf(e.Approval)
	case KindDone:
		return nilIf(e.Done)
	case KindThought:
		return nilIf(e.Thought)
	case KindAnswer:
		return nilIf(e.Answer)
	case KindLLM:
		return nilIf(e.LLM)
	case KindReplan:
		return nilIf(e.Replan)
	case KindReplay:
		return nilIf(e.Replay)
	case KindBatch:
		return nilIf(e.Batch)
	case KindHost:
		return nilIf(e.HostEnd)
	case KindWarning:
		return nilIf(e.Warning)
	case KindOutput:
		return nilIf(e.Output)
	}
	return nil
}

func nilIf[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

// MarshalJSON writes one object: "event" first, then "host" (every kind
// but llm, whose per-host usage names it last, and batch, which has none),
// "session" (plan and done when set; batch always), then the payload's own
// keys in their order.
func (e Event) MarshalJSON() ([]byte, error) {
	p := e.payload()
	if p == nil {
		return nil, fmt.Errorf("event %q: no payload", e.Kind)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	body := bytes.TrimSpace(buf.Bytes())
	var b bytes.Buffer
	b.WriteString(`{"event":`)
	writeString(&b, string(e.Kind))
	switch e.Kind {
	case KindLLM:
	case KindBatch:
		b.WriteString(`,"session":`)
		writeString(&b, e.Session)
	default:
		b.WriteString(`,"host":`)
		writeString(&b, e.Host)
		if (e.Kind == KindPlan || e.Kind == KindDone) && e.Session != "" {
			b.WriteString(`,"session":`)
			writeString(&b, e.Session)
		}
	}
	if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
		b.WriteByte(',')
		b.Write(inner)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeString writes s as a JSON string without HTML escaping, as the
// renderers' encoders do.
func writeString(b *bytes.Buffer, s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimRight(sb.Bytes(), "\n"))
}
