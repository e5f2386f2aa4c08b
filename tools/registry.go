package tools

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// Registry holds tools by name. It is read-only after NewRegistry and safe
// for concurrent use.
type Registry struct {
	tools map[string]Tool
}

// NewRegistry returns a registry of tools. Two tools with one name panic:
// that is a programming error.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		if _, dup := r.tools[t.Name()]; dup {
			panic("tools: duplicate tool " + t.Name())
		}
		r.tools[t.Name()] = t
	}
	return r
}

// Default returns a registry of every tool: the five core tools of
// DESIGN.md, find, grep, wget, ps, ss, lsof, sys_monitor, upload_file and
// download_file, and the container tools (container_list, _logs,
// _inspect, _start, _stop, _restart), semantic_search and session_files (WithSessionFiles). File tools follow policy's path rules and size caps.
// check_condition needs WithConditionEvaluator; without it, it reports that
// the runner must evaluate conditions.
func Default(policy safety.Policy, opts ...Option) *Registry {
	c := newConfig(policy, opts)
	return NewRegistry(
		newExecuteCommand(c),
		newReadFile(c),
		newWriteFile(c),
		newEditFile(c),
		NewCheckCondition(c.eval),
		newFind(c), newGrep(c), newWget(c), newPs(c), newSs(c), newLsof(c),
		newSysMonitor(c),
		newUploadFile(c), newDownloadFile(c),
		newContainerList(c), newContainerLogs(c), newContainerInspect(c),
		newContainerStart(c), newContainerStop(c), newContainerRestart(c),
		newSemanticSearch(c), newSessionFiles(c),
	)
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Function is a tool in the shape of an OpenAI function definition
// ({"type":"function","function":{…}} wraps it on the wire).
type Function struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Parameters  *Schema `json:"parameters"`
}

// Schemas returns every tool's function definition, sorted by name. The
// parameters include the optional step keys "description", "save_output_as"
// and "condition" (DESIGN.md); check_condition's own "condition" parameter
// takes precedence over the step key.
func (r *Registry) Schemas() []Function {
	out := make([]Function, 0, len(r.tools))
	for _, n := range r.Names() {
		t := r.tools[n]
		out = append(out, Function{Name: n, Description: t.Description(), Parameters: withStepProperties(t.Schema())})
	}
	return out
}

// Validate checks params for the tool called name without running anything:
// the tool exists, required parameters are present, types fit (with the
// coercions Run accepts), enum values and tool-specific rules hold. The
// step keys are tolerated. Errors wrap ErrUnknownTool or ErrInvalidParams.
// It is Prepare without keeping the Call.
func (r *Registry) Validate(name string, params map[string]any) error {
	_, err := r.Prepare(name, params)
	return err
}

// Run runs the tool called name with params (a plan's map). An unknown tool
// is a model-fixable Output, not an error.
func (r *Registry) Run(ctx context.Context, tr transport.Transport, name string, params map[string]any) (Output, error) {
	t, ok := r.tools[name]
	if !ok {
		return ErrorOutput("unknown tool %q; available tools: %s", name, quoteList(r.Names())), nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return ErrorOutput("parameters: %v", err), nil
	}
	return t.Run(ctx, tr, raw)
}
