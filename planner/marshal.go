package planner

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Marshal writes p as a plan file that Parse reads back equal (but for
// Line and Source): top-level `steps` when p is one phase without a goal,
// else `phases`, numbered by position. Phases without steps — a phase the
// model closed without a step — are left out; a plan with no step at all, a
// phase of several without a goal, a non-finite float or invalid UTF-8 is an
// error, since Parse would refuse the file.
func Marshal(p *Plan) ([]byte, error) {
	out := filePlan{Name: yamlString(p.Name)}
	if len(p.Vars) > 0 {
		out.Vars = make(map[string]yamlString, len(p.Vars))
		for k, v := range p.Vars {
			out.Vars[k] = yamlString(v)
		}
	}
	var phases []Phase
	for _, ph := range p.Phases {
		if len(ph.Steps) > 0 {
			phases = append(phases, ph)
		}
	}
	if len(phases) == 0 {
		return nil, errors.New("marshal plan: the plan has no steps")
	}
	if err := checkText("name", p.Name); err != nil {
		return nil, err
	}
	for k, v := range p.Vars {
		if err := checkText("var "+k, k+v); err != nil {
			return nil, err
		}
	}
	perms, err := marshalPermissions(p.Permissions)
	if err != nil {
		return nil, err
	}
	out.Permissions = perms
	single := len(phases) == 1 && (&Plan{Phases: phases}).singlePhase()
	for i, ph := range phases {
		steps, err := fileSteps(ph.Steps)
		if err != nil {
			return nil, err
		}
		if single {
			out.Steps = steps
			break
		}
		if ph.Goal == "" {
			return nil, fmt.Errorf("marshal plan: phase %d has no goal", i+1)
		}
		if err := checkText("phase", ph.Goal+ph.Description+ph.SuccessCriteria); err != nil {
			return nil, err
		}
		out.Phases = append(out.Phases, filePhase{Phase: i + 1, Goal: yamlString(ph.Goal),
			Description: yamlString(ph.Description), SuccessCriteria: yamlString(ph.SuccessCriteria), Steps: steps})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("marshal plan: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("marshal plan: %w", err)
	}
	return buf.Bytes(), nil
}

// The file's layout: field order as written.
type filePlan struct {
	Name yamlString            `yaml:"name,omitempty"`
	Vars map[string]yamlString `yaml:"vars,omitempty"`
	// Permissions come before the steps: a reviewer reads the limits first.
	Permissions *filePermissions `yaml:"permissions,omitempty"`
	Steps       []fileStep       `yaml:"steps,omitempty"`
	Phases      []filePhase      `yaml:"phases,omitempty"`
}

type filePhase struct {
	Phase           int        `yaml:"phase"`
	Goal            yamlString `yaml:"goal"`
	Description     yamlString `yaml:"description,omitempty"`
	SuccessCriteria yamlString `yaml:"success_criteria,omitempty"`
	Steps           []fileStep `yaml:"steps"`
}

type fileStep struct {
	Tool         yamlString `yaml:"tool"`
	Description  yamlString `yaml:"description,omitempty"`
	Parameters   any        `yaml:"parameters,omitempty"` // map[string]any or quotedKeys
	SaveOutputAs yamlString `yaml:"save_output_as,omitempty"`
	Condition    yamlString `yaml:"condition,omitempty"`
	IgnoreErrors bool       `yaml:"ignore_errors,omitempty"`
	Become       bool       `yaml:"become,omitempty"`
}

func fileSteps(steps []Step) ([]fileStep, error) {
	out := make([]fileStep, 0, len(steps))
	for i, st := range steps {
		if st.Tool == "" {
			return nil, fmt.Errorf("marshal plan: step %d has no tool", i+1)
		}
		if err := checkText("step "+st.Tool, st.Tool+st.Description+st.SaveOutputAs+st.Condition); err != nil {
			return nil, err
		}
		params, err := fileValue("parameters", st.Parameters)
		if err != nil {
			return nil, err
		}
		var pv any // nil when empty, so that it is left out
		switch p := params.(type) {
		case map[string]any:
			if len(p) > 0 {
				pv = p
			}
		case quotedKeys: // a "<<" key
			pv = p
		}
		out = append(out, fileStep{Tool: yamlString(st.Tool), Description: yamlString(st.Description),
			Parameters: pv, SaveOutputAs: yamlString(st.SaveOutputAs), Condition: yamlString(st.Condition),
			IgnoreErrors: st.IgnoreErrors, Become: st.Become})
	}
	return out, nil
}

func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("marshal plan: %s: not valid UTF-8", what)
	}
	return nil
}

// fileValue copies a parameter value, checking what Parse would refuse and
// wrapping floats so they are written as floats (1.0, not 1).
func fileValue(path string, v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if err := checkText(path, k); err != nil {
				return nil, err
			}
			c, err := fileValue(path+"."+k, e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		if _, ok := out["<<"]; ok {
			return quotedKeys(out), nil
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := fileValue(fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case string:
		return yamlString(x), checkText(path, x)
	case float32:
		return fileValue(path, float64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("marshal plan: %s: %v is not a finite number", path, x)
		}
		return yamlFloat(x), nil
	}
	return v, nil
}

// yamlFloat is written with a decimal point or exponent, so that it reads
// back as a float.
type yamlFloat float64

// MarshalYAML implements yaml.Marshaler.
func (f yamlFloat) MarshalYAML() (any, error) {
	s := strconv.FormatFloat(float64(f), 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}, nil
}

// quotedKeys is a mapping written with its keys double-quoted: yaml.v3
// writes a "<<" key plain, which reads back as a merge key.
type quotedKeys map[string]any

// MarshalYAML implements yaml.Marshaler.
func (m quotedKeys) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range sortedKeys(m) {
		var v yaml.Node
		if err := v.Encode(m[k]); err != nil {
			return nil, err
		}
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Style: yaml.DoubleQuotedStyle}
		n.Content = append(n.Content, key, &v)
	}
	return n, nil
}

// yamlString is a string written so that it reads back the same: a
// multi-line one as a literal block where yaml.v3 writes that faithfully
// (it drops a leading newline, for one), else double-quoted.
type yamlString string

// MarshalYAML implements yaml.Marshaler.
func (s yamlString) MarshalYAML() (any, error) {
	if !strings.Contains(string(s), "\n") {
		return string(s), nil
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(s), Style: yaml.LiteralStyle}
	var back string
	if out, err := yaml.Marshal(n); err != nil || yaml.Unmarshal(out, &back) != nil || back != string(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n, nil
}
