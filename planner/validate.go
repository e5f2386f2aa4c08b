package planner

import (
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/autoshell/agent/execctx"
)

// ToolChecker checks a step's tool and parameters without running it: an
// unknown tool or a missing required parameter is an error. The tool
// registry implements it.
type ToolChecker interface {
	Validate(tool string, params map[string]any) error
}

// conditionTool is the tool whose `condition` parameter is a condition over
// variables rather than text (tools.CheckConditionName).
const conditionTool = "check_condition"

// Validate checks the whole plan before anything runs and returns every
// problem found, joined, each an *Error (`file:line: step N (tool): …`):
//
//   - the tool and its parameters, through tools (nil: not checked);
//   - `save_output_as` and var names (execctx.ValidateName);
//   - condition syntax, of `condition` and of check_condition's parameter;
//   - malformed {{templates}} in parameter strings, nested ones included;
//     a parameter that is one whole template ("{{port}}") passes the type
//     check whatever its type: RunStep checks it once resolved;
//   - step keys (`condition`, `save_output_as`, `description`) written
//     under `parameters`, where they would be ignored;
//   - a variable used in a template or a condition before any step could
//     set it. Available from the start are the plan's vars and preset
//     (--var keys, inventory vars); `last` from the second step on; a step's
//     `save_output_as` from the next step on — even if that step's
//     condition might skip it, which only the run can tell.
func Validate(p *Plan, tools ToolChecker, preset []string) error {
	v := &validator{plan: p, tools: tools, avail: map[string]bool{}, setBy: map[string]int{}}
	for _, name := range sortedKeys(p.Vars) {
		if err := execctx.ValidateName(name); err != nil {
			v.add(0, Step{}, fmt.Errorf("vars: %w", err))
		}
		v.avail[name] = true
	}
	for _, name := range preset {
		v.avail[name] = true
	}
	n := 0
	for _, ph := range p.Phases {
		for _, st := range ph.Steps {
			n++
			if _, ok := v.setBy[st.SaveOutputAs]; !ok && st.SaveOutputAs != "" {
				v.setBy[st.SaveOutputAs] = n
			}
		}
	}
	if n == 0 {
		v.add(0, Step{}, errors.New("the plan has no steps"))
	}
	n = 0
	for _, ph := range p.Phases {
		if len(ph.Steps) == 0 {
			v.add(0, Step{}, fmt.Errorf("phase %d (%s) has no steps", ph.Phase, ph.Goal))
		}
		for _, st := range ph.Steps {
			n++
			v.step(n, st)
			v.avail[execctx.LastVar] = true
			if st.SaveOutputAs != "" {
				v.avail[st.SaveOutputAs] = true
			}
		}
	}
	return errors.Join(v.errs...)
}

type validator struct {
	plan  *Plan
	tools ToolChecker
	avail map[string]bool // names set before the current step
	setBy map[string]int  // name → first step that saves it
	errs  []error
}

func (v *validator) add(n int, st Step, err error) {
	v.errs = append(v.errs, &Error{Source: v.plan.Source, Line: st.Line, Step: n, Tool: st.Tool, Err: err})
}

func (v *validator) step(n int, st Step) {
	if st.Tool == "" {
		v.add(n, st, errors.New("no tool"))
	} else if v.tools != nil {
		if err := v.tools.Validate(st.Tool, v.typeCheckable(st.Tool, st.Parameters)); err != nil {
			v.add(n, st, err)
		}
	}
	for _, key := range misplacedKeys(st.Tool, st.Parameters) {
		v.add(n, st, misplacedError(key))
	}
	if st.SaveOutputAs != "" {
		if err := execctx.ValidateName(st.SaveOutputAs); err != nil {
			v.add(n, st, fmt.Errorf("save_output_as: %w", err))
		}
	}
	if st.Condition != "" {
		v.condition(n, st, "condition", st.Condition)
	}
	for _, key := range sortedKeys(st.Parameters) {
		val := st.Parameters[key]
		names, err := execctx.ParamVars(map[string]any{key: val})
		if err != nil {
			v.add(n, st, err)
		}
		v.used(n, st, "parameter "+key, names)
		if cond, ok := val.(string); ok && key == "condition" && st.Tool == conditionTool {
			v.condition(n, st, "parameter condition", cond)
		}
	}
}

// stepLevelKeys are keys of a step that a plan file might wrongly put
// under `parameters`, where the executor would ignore them.
var stepLevelKeys = []string{"condition", "save_output_as", "description", "ignore_errors", "become"}

// misplacedKeys returns the step-level keys in params, sorted, except
// check_condition's own `condition` parameter.
func misplacedKeys(tool string, params map[string]any) []string {
	var out []string
	for _, k := range stepLevelKeys {
		if _, ok := params[k]; ok && !(k == "condition" && tool == conditionTool) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func misplacedError(key string) error {
	return fmt.Errorf("`%s` belongs at the step level, not under parameters", key)
}

// wholeTemplate is a parameter value that is one {{reference}} and
// nothing else: its type is only known once resolved.
var wholeTemplate = regexp.MustCompile(`^\s*\{\{\s*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*\s*\}\}\s*$`)

// ParamTyper is an optional capability of a ToolChecker: a valid value of
// the type of a tool's parameter, for a parameter written as one whole
// template, whose type only the run can know. ok is false when the tool or
// parameter is unknown, or when any string fits. The tool registry
// implements it.
type ParamTyper interface {
	Placeholder(tool, param string) (value any, ok bool)
}

// typeCheckable returns params with each whole-template value of a
// parameter that is not a free string replaced by a placeholder of the
// parameter's type, so that the checker looks at what a plan can know
// before the run. RunStep validates the resolved value. Without a
// ParamTyper, params is returned as is.
func (v *validator) typeCheckable(tool string, params map[string]any) map[string]any {
	pt, ok := v.tools.(ParamTyper)
	if !ok {
		return params
	}
	var out map[string]any
	for k, val := range params {
		s, ok := val.(string)
		if !ok || !wholeTemplate.MatchString(s) {
			continue
		}
		ph, ok := pt.Placeholder(tool, k)
		if !ok {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(params))
			for k2, v2 := range params {
				out[k2] = v2
			}
		}
		out[k] = ph
	}
	if out == nil {
		return params
	}
	return out
}

// condition checks the syntax of cond and the variables it reads.
func (v *validator) condition(n int, st Step, where, cond string) {
	names, err := execctx.ConditionVars(cond)
	if err != nil {
		v.add(n, st, fmt.Errorf("%s: %w", where, err))
		return
	}
	v.used(n, st, where, names)
}

// used reports each of names that no earlier step could have set.
func (v *validator) used(n int, st Step, where string, names []string) {
	for _, name := range names {
		if v.avail[name] {
			continue
		}
		var err error
		switch by, later := v.setBy[name]; {
		case name == execctx.LastVar:
			err = fmt.Errorf("%s uses `last` in the first step, before any step has run: %w", where, execctx.ErrUnknownVariable)
		case later && by == n:
			err = fmt.Errorf("%s uses `%s`, which this step's own save_output_as sets only after it runs: %w", where, name, execctx.ErrUnknownVariable)
		case later:
			err = fmt.Errorf("%s uses `%s` before step %d sets it: %w", where, name, by, execctx.ErrUnknownVariable)
		default:
			err = fmt.Errorf("%s uses `%s`, which no step, var or --var sets: %w", where, name, execctx.ErrUnknownVariable)
		}
		v.add(n, st, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
