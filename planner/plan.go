package planner

import "github.com/autoshell/agent/safety"

// Step is one tool call: the schema shared by LLM tool calls and plan files
// (DESIGN.md, "The step").
type Step struct {
	Tool         string         `json:"tool" yaml:"tool"`
	Description  string         `json:"description,omitempty" yaml:"description,omitempty"`
	Parameters   map[string]any `json:"parameters,omitempty" yaml:"parameters,omitempty"`
	SaveOutputAs string         `json:"save_output_as,omitempty" yaml:"save_output_as,omitempty"`
	Condition    string         `json:"condition,omitempty" yaml:"condition,omitempty"`
	// IgnoreErrors (Ansible's ignore_errors): when the step fails, its
	// status error and observation are recorded and the run goes on
	// instead of stopping there. A denied step still stops the run.
	IgnoreErrors bool `json:"ignore_errors,omitempty" yaml:"ignore_errors,omitempty"`
	// Become (Ansible's task keyword): the step runs as the become user
	// (root unless --become-user or ansible_become_user says otherwise)
	// through sudo. A run with become enabled runs every step so.
	Become bool `json:"become,omitempty" yaml:"become,omitempty"`
	// Line is the step's line in its plan file; 0 if it is not from a file.
	Line int `json:"-" yaml:"-"`
}

// Phase is one stage of a plan with a goal, as the planning call returns it
// (`submit_plan`) and as plan files write it.
type Phase struct {
	Phase           int    `json:"phase" yaml:"phase"` // 1-based position
	Goal            string `json:"goal" yaml:"goal"`
	Description     string `json:"description,omitempty" yaml:"description,omitempty"`
	SuccessCriteria string `json:"success_criteria,omitempty" yaml:"success_criteria,omitempty"`
	Steps           []Step `json:"steps,omitempty" yaml:"steps,omitempty"`
}

// Plan is a task broken into phases of steps. A plan file with a top-level
// `steps` list is one phase without a goal.
type Plan struct {
	Name   string            `json:"name,omitempty" yaml:"name,omitempty"`
	Vars   map[string]string `json:"vars,omitempty" yaml:"vars,omitempty"`
	Phases []Phase           `json:"phases" yaml:"phases"`
	// Permissions is the plan's `permissions:` block, nil when it has
	// none: what its steps may read, write and run, and whether they may
	// connect out (see the parser's permissions).
	Permissions *safety.Permissions `json:"permissions,omitempty" yaml:"-"`
	// Source names where the plan came from (a file name) in errors.
	Source string `json:"-" yaml:"-"`
}

// Steps returns every step of the plan in execution order.
func (p *Plan) Steps() []Step {
	var out []Step
	for _, ph := range p.Phases {
		out = append(out, ph.Steps...)
	}
	return out
}

// singlePhase reports whether the plan is written with top-level `steps`:
// one phase that has nothing but steps.
func (p *Plan) singlePhase() bool {
	if len(p.Phases) != 1 {
		return false
	}
	ph := p.Phases[0]
	return ph.Goal == "" && ph.Description == "" && ph.SuccessCriteria == ""
}
