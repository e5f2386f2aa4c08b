package planner

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPlan is wrapped by every error Parse and Validate return: the plan is
// malformed or invalid, and nothing of it ran (exit code 2).
var ErrPlan = errors.New("invalid plan")

// Error is one problem in a plan, located as precisely as known.
type Error struct {
	Source string // the plan's file name; "" for a plan not read from a file
	Line   int    // 1-based source line; 0 when unknown
	Step   int    // 1-based position of the step in the whole plan; 0 when not about a step
	Tool   string // the step's tool, when Step > 0
	Err    error
}

// Error formats the problem as `file:line: step N (tool): message`.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
	} else {
		b.WriteString("plan")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Step > 0 {
		tool := e.Tool
		if tool == "" {
			tool = "no tool"
		}
		fmt.Fprintf(&b, "step %d (%s): ", e.Step, tool)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns ErrPlan and the cause, so errors.Is works for both.
func (e *Error) Unwrap() []error { return []error{ErrPlan, e.Err} }
