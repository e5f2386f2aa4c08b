package stepgen

import "errors"

// Reasons a run stops before the model says it is done. They are wrapped
// with the details; the run failed (exit 1).
var (
	ErrMaxSteps  = errors.New("step limit reached")
	ErrMaxRounds = errors.New("round limit reached")
	ErrLoop      = errors.New("loop detected")
)
