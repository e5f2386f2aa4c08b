package planner

// Event is something the executor did, for a renderer: *PlanEvent,
// *PhaseEvent, *StepStartEvent, *StepEvent or *DoneEvent. Each marshals
// to one JSON object with an "event" key (DESIGN.md, "Events and output").
// Nothing below cmd prints; the executor only emits events.
type Event interface {
	// Name is the value of the "event" key: plan, phase, step_start, step
	// or done.
	Name() string
}

// Event names.
const (
	EventPlan      = "plan"
	EventPhase     = "phase"
	EventStepStart = "step_start"
	EventStep      = "step"
	EventDone      = "done"
)

// PhaseInfo describes one phase in a plan event.
type PhaseInfo struct {
	Phase           int    `json:"phase"`
	Goal            string `json:"goal,omitempty"`
	Description     string `json:"description,omitempty"`
	SuccessCriteria string `json:"success_criteria,omitempty"`
	Steps           int    `json:"steps"`
}

// PlanEvent starts a plan: its phases.
type PlanEvent struct {
	Event   string      `json:"event"`
	Host    string      `json:"host"`
	Session string      `json:"session,omitempty"`
	Plan    string      `json:"plan,omitempty"` // the plan's name
	DryRun  bool        `json:"dry_run,omitempty"`
	Phases  []PhaseInfo `json:"phases"`
}

// PhaseEvent starts a phase.
type PhaseEvent struct {
	Event string `json:"event"`
	Host  string `json:"host"`
	PhaseInfo
}

// StepStartEvent announces a step that is about to be classified and run,
// with its parameters resolved (a renderer shows it and a spinner).
type StepStartEvent struct {
	Event       string         `json:"event"`
	Host        string         `json:"host"`
	Phase       int            `json:"phase"`
	Step        int            `json:"step"` // 1-based position in the run
	Tool        string         `json:"tool"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Command     string         `json:"command,omitempty"`
	Path        string         `json:"path,omitempty"`
	Risk        string         `json:"risk"`
}

// StepEvent is a finished step, whatever its status.
type StepEvent struct {
	Event       string         `json:"event"`
	Host        string         `json:"host"`
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
	// Interrupted: the run was cancelled (Ctrl-C) while the step ran; its
	// exit code means nothing.
	Interrupted bool `json:"interrupted,omitempty"`
}

// DoneEvent ends a plan on a host.
type DoneEvent struct {
	Event   string `json:"event"`
	Host    string `json:"host"`
	Session string `json:"session,omitempty"`
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
}

// Name implements Event.
func (*PlanEvent) Name() string { return EventPlan }

// Name implements Event.
func (*PhaseEvent) Name() string { return EventPhase }

// Name implements Event.
func (*StepStartEvent) Name() string { return EventStepStart }

// Name implements Event.
func (*StepEvent) Name() string { return EventStep }

// Name implements Event.
func (*DoneEvent) Name() string { return EventDone }
