package execctx

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/parser/utils"
)

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
	chains := chainCounter{stack: []int{0}}
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
			chains.open()
		case r == ')' || r == ']' || r == '}':
			brackets = append(brackets, bracket{i, -1})
			chains.close()
		case r == '/' && i+1 < len(rs) && rs[i+1] == '/':
			return "", nil, at(i, "// is not supported: use int(a / b) for floor division")
		case r == '/' && i+1 < len(rs) && rs[i+1] == '*':
			return "", nil, at(i, "/* is not supported")
		case r == '|':
			if i+1 < len(rs) && rs[i+1] == '|' {
				chains.endSegment()
				i++
				continue
			}
			return "", nil, at(i, "| is not supported: use or")
		case r == '&' && i+1 < len(rs) && rs[i+1] == '&', r == ',', r == '?', r == ':', r == ';':
			chains.endSegment()
		case r == '<' || r == '>':
			chains.compare()
		case (r == '=' || r == '!') && i+1 < len(rs) && rs[i+1] == '=':
			chains.compare()
			i++
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
			if !afterDot(rs, i) {
				switch word {
				case "and", "or":
					chains.endSegment()
				case "in":
					chains.compare()
				case "is":
					chains.compare()
					rewriteIs(rs, i)
				}
			}
			i = j
		}
	}
	if chains.finish() > maxChainLinks {
		return "", nil, fmt.Errorf("more than %d chained comparisons (like a < b < c)", maxChainLinks)
	}
	return string(rs), brackets, nil
}

// maxChainLinks bounds chained comparisons. expr shares a chain's middle
// operand between two comparisons (a < b < c is a < b && b < c), so every
// chain nested in such an operand doubles the work of each pass over the
// tree; without a bound, `n < (n < (… ) < n) < n` takes exponential time.
const maxChainLinks = 4

// chainCounter counts the links of chained comparisons: comparisons beyond
// the first in a segment that and, or, commas, ?, : and brackets delimit.
// `not` does not end a segment: expr chains `a < not b < c` too. `a not in
// b` counts once, as `in`.
type chainCounter struct {
	stack []int // comparisons in the open segment, per bracket depth
	links int
}

func (c *chainCounter) open()    { c.stack = append(c.stack, 0) }
func (c *chainCounter) compare() { c.stack[len(c.stack)-1]++ }

func (c *chainCounter) endSegment() {
	top := &c.stack[len(c.stack)-1]
	c.links += max(*top-1, 0)
	*top = 0
}

func (c *chainCounter) close() {
	if len(c.stack) > 1 {
		c.endSegment()
		c.stack = c.stack[:len(c.stack)-1]
	}
}

func (c *chainCounter) finish() int {
	for len(c.stack) > 1 {
		c.close()
	}
	c.endSegment()
	return c.links
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
