package session

import (
	"time"

	"github.com/autoshell/agent/event"
)

// Record kinds (the "r" key of a line).
const (
	RecStart     = "start"      // the session began: Start
	RecResume    = "resume"     // agent resume took it up again
	RecPlan      = "plan"       // the model's (or a plan file's) phases
	RecAnswer    = "answer"     // the model's text that closed a phase (Phase, Text)
	RecStepStart = "step_start" // a step is about to be approved and run
	RecStep      = "step"       // a step ended (Status), with the variables it set (Vars)
	RecLLM       = "llm"        // one model call's usage
	RecDone      = "done"       // the work on a host ended (Status success|failed)
	RecHost      = "host"       // a batch host ended (Status ok|failed|not run)
	RecEnd       = "end"        // the session ended (Status done|failed|interrupted)
	// RecProc: a command started in process group PGID on Host (its
	// "local" or its alias); RecReaped: what a later agent found of it
	// after this session's agent died (Status killed|gone|kept, Text why).
	RecProc   = "proc"
	RecReaped = "reaped"
)

// Session states.
const (
	StateDone        = "done"
	StateFailed      = "failed"
	StateInterrupted = "interrupted"
	StateRunning     = "running" // another agent holds the session's lock
)

// Record is one line of a session file. R says which kind; the fields of
// that kind are set.
type Record struct {
	R    string    `json:"r"`
	Time time.Time `json:"time"`
	Host string    `json:"host,omitempty"`

	Start *Start `json:"start,omitempty"`

	Phase   int            `json:"phase,omitempty"`
	Step    int            `json:"step,omitempty"`
	Tool    string         `json:"tool,omitempty"`
	Params  map[string]any `json:"params,omitempty"`
	Command string         `json:"command,omitempty"`
	Path    string         `json:"path,omitempty"`
	Risk    string         `json:"risk,omitempty"`
	// Status: a step's (ok, error, skipped, denied), a host's or the
	// session's.
	Status string `json:"status,omitempty"`
	// Output is a step's observation, bounded.
	Output string `json:"output,omitempty"`
	// Interrupted: the step was cancelled while it ran; its outcome is
	// not known.
	Interrupted bool `json:"interrupted,omitempty"`
	// Vars are the variables a step set (its save_output_as, and last).
	Vars map[string]any `json:"vars,omitempty"`

	Phases []event.PhaseInfo `json:"phases,omitempty"`
	Text   string            `json:"text,omitempty"`

	// PGID is a RecProc's or RecReaped's process group on its host.
	PGID int `json:"pgid,omitempty"`

	Model            string `json:"model,omitempty"`
	PromptTokens     int    `json:"prompt_tokens,omitempty"`
	CompletionTokens int    `json:"completion_tokens,omitempty"`
}

// Session kinds.
const (
	KindRun       = "run"        // agent run PLAN on one host
	KindTask      = "task"       // agent -c TASK on one host
	KindBatchRun  = "batch-run"  // agent run PLAN -i INVENTORY
	KindBatchTask = "batch-task" // agent -c TASK -i INVENTORY
	KindMCP       = "mcp"        // one MCP client's calls through agent mcp
)

// Start describes a session: what was asked, where, and the command line
// that asked it (secret values replaced), which agent resume runs again.
type Start struct {
	Kind string `json:"kind"`
	// Target is the host (an SSH alias, or "local"); Inventory and Limit
	// the batch's selection.
	Target string `json:"target,omitempty"`
	// Client is who called through agent mcp: the OS user, the MCP
	// client's name and version, over HTTP its address.
	Client    string   `json:"client,omitempty"`
	Inventory []string `json:"inventory,omitempty"`
	Limit     string   `json:"limit,omitempty"`
	// Plan is the plan file (as given), PlanSHA256 its content's hash.
	Plan       string `json:"plan,omitempty"`
	PlanSHA256 string `json:"plan_sha256,omitempty"`
	Task       string `json:"task,omitempty"`
	Model      string `json:"model,omitempty"`
	Hosts      int    `json:"hosts,omitempty"`
	DryRun     bool   `json:"dry_run,omitempty"`
	// Args are agent's arguments, Dir the working directory they were
	// given in.
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	// Redacted names the --var variables whose values were left out:
	// agent resume needs them again.
	Redacted []string `json:"redacted,omitempty"`
}

// MaxOutput bounds a step's observation in the file.
const MaxOutput = 4096

// clip returns s cut to MaxOutput bytes (whole runes), marking the cut.
func clip(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	cut := MaxOutput
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "… [cut]"
}
