package execctx

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidName: a variable name is not an identifier or is reserved.
	ErrInvalidName = errors.New("invalid variable name")
	// ErrUnknownVariable: a template or condition names a variable that is
	// not set (or a key its map does not have).
	ErrUnknownVariable = errors.New("unknown variable")
	// ErrTemplate: a template is malformed (unterminated {{, unsupported
	// expression inside {{ }}).
	ErrTemplate = errors.New("bad template")
	// ErrCondition: a condition did not parse, did not evaluate, or did not
	// evaluate to true or false. Every condition error wraps it.
	ErrCondition = errors.New("bad condition")
)

// ConditionError reports a condition that could not be parsed or evaluated.
type ConditionError struct {
	Condition string // the condition as written
	Column    int    // 1-based column (in runes, on its line) of the problem; 0: unknown
	Err       error  // the cause
}

func (e *ConditionError) Error() string {
	cond := clipRunes(e.Condition, 200)
	if e.Column > 0 {
		return fmt.Sprintf("condition %q: %v (column %d)", cond, e.Err, e.Column)
	}
	return fmt.Sprintf("condition %q: %v", cond, e.Err)
}

// Unwrap returns the cause and ErrCondition, so errors.Is works for both.
func (e *ConditionError) Unwrap() []error { return []error{ErrCondition, e.Err} }
