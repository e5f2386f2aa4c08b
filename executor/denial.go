package executor

import (
	"fmt"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/safety"
)

// denial is why a step ends before its tool runs (or, from run, why it
// failed): each stage returns one or nil. Its kind says how the step ends
// and what the model is told; err, when set, stops the run (a lost
// connection, an interruption, a failing audit log) whatever the kind.
type denial struct {
	kind   denialKind
	reason string
	err    error
}

// denialKind is how a step that a stage stopped ends.
type denialKind int

const (
	// stepFailed: status error; the model sees "[ERROR]: reason" and may
	// fix the step (a bad template, parameters, a refused path, a change
	// undo could not take back).
	stepFailed denialKind = iota
	// byPolicy: status denied by the policy alone (declared permissions,
	// --read-only): "[denied by safety policy: reason]".
	byPolicy
	// byApprover: status denied by the approver's decision (the step's
	// Decision says by whom): "[denied by safety policy: reason]".
	byApprover
	// notConfined: status denied because the commands could not be held to
	// their level: "[denied: reason]".
	notConfined
	// notAudited: status denied because the audit log could not record
	// the step before it ran (fail closed): "[denied: reason]".
	notAudited
	// blockedBySandbox: status error, the sandbox's own observation.
	blockedBySandbox
	// skipped: status skipped (a false condition, a dry run), the
	// observation as is.
	skipped
	// infra: the run stops with err; the step's status is error.
	infra
)

func failed(format string, a ...any) *denial {
	return &denial{kind: stepFailed, reason: fmt.Sprintf(format, a...)}
}

func broken(err error) *denial { return &denial{kind: infra, err: err} }

func skip(observation string) *denial { return &denial{kind: skipped, reason: observation} }

// apply ends r as d says.
func (d *denial) apply(r *StepResult) {
	switch d.kind {
	case stepFailed:
		r.fail(d.reason)
	case byPolicy:
		r.Status = execctx.StatusDenied
		r.Decision = safety.Decision{Reason: d.reason, By: safety.ByPolicy}
		r.Observation = "[denied by safety policy: " + d.reason + "]"
	case byApprover:
		r.Status = execctx.StatusDenied
		r.Observation = "[denied by safety policy: " + d.reason + "]"
	case notConfined, notAudited:
		r.Status = execctx.StatusDenied
		r.Observation = "[denied: " + d.reason + "]"
	case blockedBySandbox:
		r.Status = execctx.StatusError
		r.Observation = d.reason
	case skipped:
		r.Status = execctx.StatusSkipped
		r.Observation = d.reason
	case infra:
		if r.Status == "" {
			r.Status = execctx.StatusError
		}
	}
}
