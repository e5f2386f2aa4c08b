package planner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/execctx"
)

// Limits on a plan file, which may come from anywhere.
const (
	MaxFileSize = 1 << 20 // bytes
	MaxNodes    = 100_000 // YAML nodes
	MaxDepth    = 64      // nesting of mappings and lists
	maxErrors   = 50      // problems reported by one Parse
)

// Keys of a plan file, in the order they are checked and written.
var (
	planKeys  = []string{"name", "vars", "permissions", "steps", "phases"}
	phaseKeys = []string{"phase", "goal", "description", "success_criteria", "steps"}
	stepKeys  = []string{"tool", "description", "parameters", "save_output_as", "condition", "ignore_errors", "become"}
)

// ParseFile reads the plan file at path; see Parse.
func ParseFile(path string) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a plan file from r; name is used in errors and becomes
// Plan.Source. It checks the file's structure — keys, types, limits — and
// returns every problem found, each an *Error saying `name:line: …`.
// Validate checks what the steps mean.
//
// The file is one YAML document, at most MaxFileSize bytes, without anchors,
// aliases, merge keys or custom tags. It holds optional `name` and `vars`
// and either `steps` (one phase) or `phases` (each with `goal` and `steps`,
// and optionally `phase` — its 1-based position —, `description` and
// `success_criteria`). Var values are strings; a number or boolean is kept
// as written (`port: 8080` is "8080"), as --var k=v would give it. Parameter
// values keep their YAML types (strings, ints, floats, booleans, null, lists,
// mappings with string keys); non-finite floats and invalid UTF-8 are
// refused, since steps are reported as JSON.
func Parse(r io.Reader, name string) (*Plan, error) {
	p := &parser{src: name, keys: map[*yaml.Node]*yaml.Node{}}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", name, err)
	}
	if len(data) > MaxFileSize {
		return nil, p.fail(1, "the file is larger than %d bytes", MaxFileSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.fail(1, "the file is empty: a plan needs `steps` or `phases`")
		}
		return nil, p.yamlError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, p.yamlError(err)
		}
		return nil, p.fail(docLine(&next), "a second YAML document: a plan file holds one (remove the `---`)")
	}
	if err := p.limits(&doc); err != nil {
		return nil, err
	}
	plan := p.plan(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	plan.Source = name
	return plan, nil
}

// parser collects the problems of one file.
type parser struct {
	src  string
	errs []error
	keys map[*yaml.Node]*yaml.Node // value → its key, for messages about a field
}

func (p *parser) fail(line int, format string, args ...any) error {
	return &Error{Source: p.src, Line: line, Err: fmt.Errorf(format, args...)}
}

// errorf records a problem at n.
func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, p.fail(n.Line, format, args...))
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yaml.v3 reports these parser errors at the 0-based line where the list or
// mapping being parsed starts, not where the problem is.
var contextErrors = regexp.MustCompile(`^did not find expected (',' or [\]}]|'-' indicator|key|node content)$`)

// yamlError turns a yaml.v3 syntax error into an *Error with its line.
func (p *parser) yamlError(err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{Source: p.src, Err: fmt.Errorf("YAML syntax: %w", err)}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	if contextErrors.MatchString(msg) {
		line++
		msg += " (in the list or mapping that starts on this line)"
	}
	return &Error{Source: p.src, Line: line, Err: fmt.Errorf("YAML syntax: %s", msg)}
}

func docLine(doc *yaml.Node) int {
	if len(doc.Content) > 0 {
		return doc.Content[0].Line
	}
	return doc.Line
}

// limits refuses anchors, aliases, too many nodes and deep nesting before
// anything is converted.
func (p *parser) limits(doc *yaml.Node) error {
	type item struct {
		n     *yaml.Node
		depth int
	}
	stack := []item{{doc, 0}}
	count := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if count++; count > MaxNodes {
			return p.fail(n.Line, "the file has more than %d YAML nodes", MaxNodes)
		}
		if n.Kind == yaml.AliasNode || n.Anchor != "" {
			return p.fail(n.Line, "YAML anchors and aliases are not supported in plan files")
		}
		if it.depth > MaxDepth {
			return p.fail(n.Line, "nested deeper than %d levels", MaxDepth)
		}
		for i := len(n.Content) - 1; i >= 0; i-- { // in document order
			stack = append(stack, item{n.Content[i], it.depth + 1})
		}
	}
	return nil
}

func (p *parser) plan(n *yaml.Node) *Plan {
	plan := &Plan{}
	f, ok := p.fields(n, "the plan", planKeys)
	if !ok {
		return plan
	}
	plan.Name = p.str(f["name"], "name")
	plan.Vars = p.vars(f["vars"])
	plan.Permissions = p.permissions(f["permissions"])
	steps, phases := f["steps"], f["phases"]
	switch {
	case steps != nil && phases != nil:
		p.errorf(p.keys[phases], "the plan has both `steps` and `phases`: use one")
	case phases != nil && (isNull(phases) || phases.Kind == yaml.SequenceNode && len(phases.Content) == 0):
		p.errorf(phases, "the plan has no phases: `phases` is empty")
	case phases != nil:
		for i, pn := range p.list(phases, "phases") {
			plan.Phases = append(plan.Phases, p.phase(pn, i+1))
		}
	case steps != nil:
		plan.Phases = []Phase{{Phase: 1, Steps: p.steps(steps, "the plan")}}
	default:
		p.errorf(n, "the plan has no `steps` (or `phases`)")
	}
	return plan
}

func (p *parser) phase(n *yaml.Node, num int) Phase {
	ph := Phase{Phase: num}
	f, ok := p.fields(n, fmt.Sprintf("phase %d", num), phaseKeys)
	if !ok {
		return ph
	}
	if pn := f["phase"]; pn != nil {
		if pn.ShortTag() != "!!int" || pn.Value != strconv.Itoa(num) {
			p.errorf(pn, "phase %d says `phase: %s`: phases are numbered 1, 2, … in order", num, pn.Value)
		}
	}
	ph.Goal = p.str(f["goal"], "goal")
	if g := f["goal"]; ph.Goal == "" && (g == nil || isNull(g) || g.ShortTag() == "!!str") {
		p.errorf(n, "phase %d has no `goal`", num)
	}
	ph.Description = p.str(f["description"], "description")
	ph.SuccessCriteria = p.str(f["success_criteria"], "success_criteria")
	if f["steps"] == nil {
		p.errorf(n, "phase %d has no `steps`", num)
	} else {
		ph.Steps = p.steps(f["steps"], fmt.Sprintf("phase %d", num))
	}
	return ph
}

func (p *parser) steps(n *yaml.Node, owner string) []Step {
	if isNull(n) || n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		p.errorf(n, "%s has no steps: `steps` is empty", owner)
		return nil
	}
	items := p.list(n, "steps")
	var out []Step
	for _, sn := range items {
		out = append(out, p.step(sn))
	}
	return out
}

func (p *parser) step(n *yaml.Node) Step {
	st := Step{Line: n.Line}
	f, ok := p.fields(n, "step", stepKeys)
	if !ok {
		return st
	}
	switch tn := f["tool"]; {
	case tn == nil || isNull(tn):
		p.errorf(n, "step has no `tool`")
	default:
		st.Tool = p.str(tn, "tool")
		if st.Tool == "" && tn.ShortTag() == "!!str" {
			p.errorf(tn, "step has an empty `tool`")
		}
	}
	st.Description = p.str(f["description"], "description")
	st.SaveOutputAs = p.str(f["save_output_as"], "save_output_as")
	st.Condition = p.str(f["condition"], "condition")
	if in := f["ignore_errors"]; in != nil && !isNull(in) {
		if in.Kind != yaml.ScalarNode || in.ShortTag() != "!!bool" {
			p.errorf(in, "`ignore_errors` must be true or false, not %s", kindOf(in))
		} else {
			st.IgnoreErrors = in.Value == "true" || in.Value == "True" || in.Value == "TRUE"
		}
	}
	if in := f["become"]; in != nil && !isNull(in) {
		if in.Kind != yaml.ScalarNode || in.ShortTag() != "!!bool" {
			p.errorf(in, "`become` must be true or false, not %s", kindOf(in))
		} else {
			st.Become = in.Value == "true" || in.Value == "True" || in.Value == "TRUE"
		}
	}
	if pn := f["parameters"]; pn != nil && !isNull(pn) {
		if pn.Kind != yaml.MappingNode {
			p.errorf(pn, "`parameters` must be a mapping, not %s", kindOf(pn))
		} else if v, ok := p.value(pn, "parameters"); ok {
			p.misplaced(pn, st.Tool)
			if m := v.(map[string]any); len(m) > 0 {
				st.Parameters = m
			}
		}
	}
	return st
}

// misplaced reports step-level keys written under a step's `parameters`
// mapping, at the key's line: the executor would ignore them there.
func (p *parser) misplaced(params *yaml.Node, tool string) {
	for i := 0; i+1 < len(params.Content); i += 2 {
		k := params.Content[i]
		if keys := misplacedKeys(tool, map[string]any{k.Value: nil}); len(keys) > 0 {
			p.errorf(k, "%v", misplacedError(keys[0]))
		}
	}
}

// vars reads the plan's variables: names checked, values strings.
func (p *parser) vars(n *yaml.Node) map[string]string {
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "`vars` must be a mapping of names to strings, not %s", kindOf(n))
		return nil
	}
	out := map[string]string{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, ok := p.key(k, seen, "vars")
		if !ok {
			continue
		}
		if err := execctx.ValidateName(name); err != nil {
			p.errorf(k, "vars: %v", err)
			continue
		}
		switch tag := v.ShortTag(); {
		case v.Kind != yaml.ScalarNode:
			p.errorf(v, "var %s must be a string, not %s", name, kindOf(v))
		case tag == "!!null":
			p.errorf(v, "var %s has no value (write \"\" for an empty string)", name)
		case tag == "!!str" || tag == "!!int" || tag == "!!float" || tag == "!!bool":
			out[name] = v.Value
		default:
			p.errorf(v, "var %s must be a string, not %s", name, kindOf(v))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
