package execctx

import (
	"errors"
	"fmt"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Limits on a condition, which comes from an LLM.
const (
	MaxConditionLength = 4096 // bytes
	maxConditionNodes  = 1000 // parsed AST nodes
	conditionCacheSize = 512
)

type compiled struct {
	program *vm.Program
	vars    []string
	err     *ConditionError
}

// failure returns a copy of the compile error, since compiled is shared.
func (c *compiled) failure() error {
	if c.err == nil {
		return nil
	}
	e := *c.err
	return &e
}

var (
	cacheMu   sync.Mutex
	condCache = map[string]*compiled{}
)

// compileCondition parses and rewrites cond, memoizing the result.
func compileCondition(cond string) *compiled {
	cacheMu.Lock()
	c, ok := condCache[cond]
	cacheMu.Unlock()
	if ok {
		return c
	}
	c = compileUncached(cond)
	cacheMu.Lock()
	if len(condCache) >= conditionCacheSize {
		clear(condCache)
	}
	condCache[cond] = c
	cacheMu.Unlock()
	return c
}

var funcOptions = func() []expr.Option {
	var opts []expr.Option
	for name, f := range pyFuncs {
		opts = append(opts, expr.Function(name, func(a ...any) (any, error) { return f(a) }))
	}
	for name, f := range internalFuncs {
		n := internalArity[name]
		opts = append(opts, expr.Function(name, func(a ...any) (any, error) {
			if len(a) < n {
				return nil, fmt.Errorf("%s: wrong number of arguments", name)
			}
			return f(a)
		}))
	}
	return opts
}()

func compileUncached(cond string) *compiled {
	fail := func(err error, offset bool) *compiled {
		var ce *ConditionError
		if !errors.As(err, &ce) {
			ce = &ConditionError{Err: err}
		}
		ce.Condition = cond
		if offset && ce.Column > 0 {
			ce.Column = lineColumn(cond, ce.Column-1)
		}
		return &compiled{err: ce}
	}
	src, brackets, err := prepare(cond)
	if err != nil {
		return fail(err, true)
	}
	rw := newRewriter(brackets)
	opts := append([]expr.Option{
		expr.DisableAllBuiltins(),
		expr.MaxNodes(maxConditionNodes),
		expr.Patch(structurePass{rw}),
		expr.Patch(translatePass{rw}),
	}, funcOptions...)
	program, err := expr.Compile(src, opts...)
	if rw.err != nil {
		return fail(rw.err, true)
	}
	if err != nil {
		return fail(fromExprError(err), false)
	}
	return &compiled{program: program, vars: rw.vars}
}

// fromExprError turns expr's error, whose text repeats the source with a
// caret, into a ConditionError with a column.
func fromExprError(err error) *ConditionError {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return &ConditionError{Err: err}
	}
	cause := fe.Prev
	if cause == nil {
		cause = errors.New(fe.Message)
	}
	return &ConditionError{Column: fe.Column + 1, Err: cause}
}

// lineColumn converts a rune offset in s to a 1-based column on its line,
// as expr reports them.
func lineColumn(s string, offset int) int {
	col, i := 0, 0
	for _, r := range s {
		if i == offset {
			break
		}
		if r == '\n' {
			col = 0
		} else {
			col++
		}
		i++
	}
	return col + 1
}

// CheckCondition reports whether cond is a well-formed condition, without
// evaluating it: for validating a plan before anything runs.
func CheckCondition(cond string) error {
	return compileCondition(cond).failure()
}

// ConditionVars lists the variables cond reads, each once, in order of first
// appearance (for `last.stdout`: `last`).
func ConditionVars(cond string) ([]string, error) {
	c := compileCondition(cond)
	if c.err != nil {
		return nil, c.failure()
	}
	return append([]string(nil), c.vars...), nil
}

// Evaluate evaluates cond over vars (copied first, as Context.Set does).
//
// Conditions are Python-style boolean expressions evaluated by
// expr-lang/expr after their syntax tree is rewritten to Python semantics:
//
//   - True, False, None; 'single' or "double" quoted strings; and, or, not
//     (operands use Python truthiness), in, not in, is, is not (as ==, !=);
//     chained comparisons (a < b < c, a == b == c); + - * / % **;
//     x[i], x[a:b] (strings by code point), d.key and d['key'] (a missing
//     key is an error, d.get('key') is None).
//   - Functions: len int float str bool abs min max any all sum, and
//     json.loads (integers become ints).
//   - Methods of str: strip lstrip rstrip lower upper startswith endswith
//     contains find count split splitlines replace join isdigit isalpha
//     isalnum isspace; of dict: get keys values items; of list: count index.
//   - == follows Python: '1' == 1 is False (no conversion between strings
//     and numbers; write int(x) == 1 or x.strip() == '1'), 1 == 1.0 and
//     True == 1 are True. <, <= … between a string and a number is an error.
//
// A condition must evaluate to True or False. Anything else — a parse
// error, an unknown variable, a runtime error such as int('abc'), or a
// result of another type — is a *ConditionError, never a silent value.
func Evaluate(cond string, vars map[string]any) (bool, error) {
	nv, err := normalize(vars)
	if err != nil {
		return false, &ConditionError{Condition: cond, Err: err}
	}
	m, _ := nv.(map[string]any)
	return evaluate(cond, m)
}

// evaluate is Evaluate over variables already in the normalized model.
func evaluate(cond string, vars map[string]any) (bool, error) {
	c := compileCondition(cond)
	if c.err != nil {
		return false, c.failure()
	}
	for _, name := range c.vars {
		if _, ok := vars[name]; !ok {
			return false, &ConditionError{Condition: cond, Err: fmt.Errorf("%w %q", ErrUnknownVariable, name)}
		}
	}
	if vars == nil {
		vars = map[string]any{}
	}
	out, err := expr.Run(c.program, vars)
	if err != nil {
		ce := fromExprError(err)
		ce.Condition = cond
		return false, ce
	}
	b, ok := out.(bool)
	if !ok {
		return false, &ConditionError{Condition: cond,
			Err: fmt.Errorf("evaluates to %s %s, not True or False", typeName(out), clipRunes(pyRepr(out), 60))}
	}
	return b, nil
}
