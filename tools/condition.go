package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/autoshell/agent/transport"
)

// CheckConditionName is the name of the condition tool.
const CheckConditionName = "check_condition"

// CheckConditionParams are check_condition's parameters. context is
// accepted because the adaptive-execution spec's examples send it, and
// ignored: conditions see the saved variables.
type CheckConditionParams struct {
	Condition string         `json:"condition" description:"Expression over saved variables, e.g. out.strip() == '1'."`
	Context   map[string]any `json:"context,omitempty" description:"Ignored."`
}

func (p *CheckConditionParams) check() error {
	if strings.TrimSpace(p.Condition) == "" {
		return errors.New("condition is empty")
	}
	return nil
}

// CheckCondition evaluates a condition with the evaluator the runner gives
// it (execctx, over the session's variables).
type CheckCondition struct {
	base[CheckConditionParams]
	eval func(cond string) (bool, error)
}

// NewCheckCondition returns check_condition evaluating with eval; a nil
// eval makes every Run a model-visible error saying the runner must
// evaluate conditions.
func NewCheckCondition(eval func(cond string) (bool, error)) *CheckCondition {
	return &CheckCondition{eval: eval, base: newBase[CheckConditionParams](CheckConditionName,
		"Evaluate a Python-style condition over saved variables (x.strip() == '1', 'error' in log, len(x) > 0); output true or false.")}
}

// Run evaluates the condition. Value is the bool result; Stdout "true" or
// "false". An expression that does not parse or evaluate is an error
// output, never true or false.
func (t *CheckCondition) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

// Touches reports that check_condition acts on nothing but the saved
// variables.
func (t *CheckCondition) Touches(raw json.RawMessage) (Effects, error) {
	_, err := t.params(raw)
	return Effects{}, err
}

func (t *CheckCondition) touches(CheckConditionParams) Effects { return Effects{} }

func (t *CheckCondition) run(_ context.Context, _ transport.Transport, p CheckConditionParams) (Output, error) {
	if t.eval == nil {
		return ErrorOutput("check_condition: conditions must be evaluated by the runner"), nil
	}
	ok, err := t.eval(p.Condition)
	if err != nil {
		return ErrorOutput("check_condition: %v", err), nil
	}
	out := TextOutput(strconv.FormatBool(ok))
	out.Value = ok
	return out, nil
}
