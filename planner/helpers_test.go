package planner

import (
	"fmt"
	"strings"
	"testing"
)

// fakeTools knows the core tools and their required parameters.
type fakeTools map[string][]string

func coreTools() fakeTools {
	return fakeTools{
		"execute_command": {"command"},
		"read_file":       {"file_path"},
		"write_file":      {"file_path", "content"},
		"edit_file":       {"file_path", "search_pattern", "replacement"},
		"check_condition": {"condition"},
	}
}

func (f fakeTools) Validate(tool string, params map[string]any) error {
	req, ok := f[tool]
	if !ok {
		return fmt.Errorf("unknown tool %q", tool)
	}
	for _, r := range req {
		if _, ok := params[r]; !ok {
			return fmt.Errorf("missing required parameter %q", r)
		}
	}
	return nil
}

func mustParse(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := Parse(strings.NewReader(src), "plan.yaml")
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return p
}

// withoutLines returns a copy of p without source positions, for comparing
// a plan with its round trip.
func withoutLines(p *Plan) *Plan {
	c := *p
	c.Source = ""
	if p.Permissions != nil {
		perms := *p.Permissions
		perms.Source = ""
		c.Permissions = &perms
	}
	c.Phases = append([]Phase(nil), p.Phases...)
	for i := range c.Phases {
		c.Phases[i].Steps = append([]Step(nil), c.Phases[i].Steps...)
		for j := range c.Phases[i].Steps {
			c.Phases[i].Steps[j].Line = 0
		}
	}
	return &c
}
