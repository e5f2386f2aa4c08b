package context

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser/utils"
	"github.com/expr-lang/expr/vm"
)

// Limits on a condition, which comes from an LLM.
const (
	MaxConditionLength = 4096 // bytes
	maxConditionNodes  = 1000 // parsed AST nodes
	conditionCacheSize = 512
)

// Conditions are Python-style boolean expressions evaluated by
// expr-lang/expr after their syntax tree is rewritten to Python semantics:
//
//   - True, False, None; 'single' or "double" quoted strings; and, or, not
//     (operands use Python truthiness), in, not in, is, is not (as ==, !=);
//     chained comparisons (a < b < c, a == b == c); + - * / % **;
//     x[i], x[a:b] (strings by code point), d.key and d['key'] (a missing
//     key is an error, d.get('key') is None).
//   - Functions: len int float str bool abs min max any all sum.
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

type compiled struct {
	program *vm.Program
	vars    []string
	err     error
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
	fail := func(err error) *compiled {
		var ce *ConditionError
		if errors.As(err, &ce) {
			ce.Condition = cond
			return &compiled{err: ce}
		}
		return &compiled{err: &ConditionError{Condition: cond, Err: err}}
	}
	src, brackets, err := prepare(cond)
	if err != nil {
		return fail(err)
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
		return fail(rw.err)
	}
	if err != nil {
		return fail(fromExprError(err))
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

// CheckCondition reports whether cond is a well-formed condition, without
// evaluating it: for validating a plan before anything runs.
func CheckCondition(cond string) error {
	return compileCondition(cond).err
}

// ConditionVars lists the variables cond reads, each once, in order of first
// appearance (for `last.stdout`: `last`).
func ConditionVars(cond string) ([]string, error) {
	c := compileCondition(cond)
	if c.err != nil {
		return nil, c.err
	}
	return append([]string(nil), c.vars...), nil
}

// Evaluate evaluates cond over vars (copied first, as Context.Set does).
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
		return false, c.err
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

// bracket is an opening (+1) or closing (-1) bracket at a rune offset.
type bracket struct{ pos, delta int }

// prepare checks cond's length and rewrites, outside string literals, the
// Python tokens expr's parser does not accept: `is not` becomes `!=` and
// `is` becomes `==`, padded so rune offsets do not move. It refuses tokens
// expr would silently read differently from Python: `//` and `/*` (comments
// in expr), a single `|` (a pipe in expr), `#`, and names starting with __.
// It also returns the brackets, for structurePass.
func prepare(cond string) (string, []bracket, error) {
	if len(cond) > MaxConditionLength {
		return "", nil, fmt.Errorf("longer than %d bytes", MaxConditionLength)
	}
	if strings.TrimSpace(cond) == "" {
		return "", nil, errors.New("empty condition")
	}
	if !utf8.ValidString(cond) {
		return "", nil, errors.New("not valid UTF-8")
	}
	rs := []rune(cond)
	var brackets []bracket
	at := func(i int, format string, args ...any) error {
		return &ConditionError{Column: i + 1, Err: fmt.Errorf(format, args...)}
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'' || r == '"' || r == '`':
			i = skipString(rs, i)
		case r == '(' || r == '[' || r == '{':
			brackets = append(brackets, bracket{i, 1})
		case r == ')' || r == ']' || r == '}':
			brackets = append(brackets, bracket{i, -1})
		case r == '/' && i+1 < len(rs) && rs[i+1] == '/':
			return "", nil, at(i, "// is not supported: use int(a / b) for floor division")
		case r == '/' && i+1 < len(rs) && rs[i+1] == '*':
			return "", nil, at(i, "/* is not supported")
		case r == '|':
			if i+1 < len(rs) && rs[i+1] == '|' {
				i++
				continue
			}
			return "", nil, at(i, "| is not supported: use or")
		case r == '#':
			return "", nil, at(i, "# comments are not supported")
		case '0' <= r && r <= '9':
			for i+1 < len(rs) && (utils.IsAlphaNumeric(rs[i+1]) || rs[i+1] == '.' && i+2 < len(rs) && rs[i+2] != '.') {
				i++
			}
		case utils.IsAlphabetic(r):
			j := i
			for j+1 < len(rs) && utils.IsAlphaNumeric(rs[j+1]) {
				j++
			}
			word := string(rs[i : j+1])
			if strings.HasPrefix(word, "__") {
				return "", nil, at(i, "names starting with __ are reserved")
			}
			if word == "is" && !afterDot(rs, i) {
				rewriteIs(rs, i)
			}
			i = j
		}
	}
	return string(rs), brackets, nil
}

// skipString returns the offset of the quote closing the string literal that
// opens at i (or the last offset when it is unterminated).
func skipString(rs []rune, i int) int {
	q := rs[i]
	for j := i + 1; j < len(rs); j++ {
		switch {
		case rs[j] == '\\' && q != '`':
			j++
		case rs[j] == q:
			return j
		}
	}
	return len(rs) - 1
}

func afterDot(rs []rune, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if !utils.IsSpace(rs[j]) {
			return rs[j] == '.'
		}
	}
	return false
}

// rewriteIs turns the `is` at i, or `is not`, into `==` or `!=` in place.
func rewriteIs(rs []rune, i int) {
	j := i + 2
	for j < len(rs) && utils.IsSpace(rs[j]) {
		j++
	}
	if j+3 <= len(rs) && string(rs[j:j+3]) == "not" && (j+3 == len(rs) || !utils.IsAlphaNumeric(rs[j+3])) {
		rs[i], rs[i+1] = '!', '='
		for k := i + 2; k < j+3; k++ {
			rs[k] = ' '
		}
		return
	}
	rs[i], rs[i+1] = '=', '='
}
