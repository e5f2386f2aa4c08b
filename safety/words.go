package safety

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords bounds how many words one brace expansion may produce
// before the word is treated as not statically resolvable.
const maxBraceWords = 256

// arg is one word of a command after static resolution: quotes removed,
// escapes applied, braces expanded. Only static words have a value.
type arg struct {
	val     string // value after quote removal; meaningful when static
	text    string // source form, shortened, for reasons
	src     string // source form
	static  bool   // no parameter, command or arithmetic expansion
	glob    bool   // unquoted pattern characters: * ? [ or an extended glob
	escaped bool   // a backslash escape outside single quotes
	tilde   bool   // begins with an unquoted ~ or with $HOME
	braces  bool   // produced by brace expansion
}

// words resolves the words of a command line, expanding braces when the
// shell reading it is bash (dash and busybox ash leave {a,b} a literal
// name: touch x{a,b} creates "x{a,b}" under /bin/sh on Debian). src is
// the code the words were parsed from, for their text.
func words(ws []*syntax.Word, src string, lang syntax.LangVariant) []arg {
	var out []arg
	for _, w := range ws {
		full := sourceText(w, src)
		text := shorten(full)
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
		if lang != syntax.LangBash || !syntax.SplitBraces(cp) {
			a := resolveWord(w)
			a.text, a.src = text, full
			out = append(out, a)
			continue
		}
		if braceCount(cp) > maxBraceWords {
			out = append(out, arg{text: text, src: full, braces: true})
			continue
		}
		for x := range expand.BracesSeq(nil, cp) {
			a := resolveWord(x)
			a.text, a.src, a.braces = text, full, true
			out = append(out, a)
		}
	}
	return out
}

// braceCount is how many words brace expansion makes of w, saturating
// just above maxBraceWords.
func braceCount(w *syntax.Word) int {
	n := 1
	for _, p := range w.Parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		k := 0
		if b.Sequence {
			k = seqCount(b)
		} else {
			for _, e := range b.Elems {
				k += braceCount(e)
			}
		}
		n = min(n*max(k, 1), maxBraceWords+1)
	}
	return n
}

func seqCount(b *syntax.BraceExp) int {
	from, err1 := strconv.ParseInt(b.Elems[0].Lit(), 10, 64)
	to, err2 := strconv.ParseInt(b.Elems[1].Lit(), 10, 64)
	if err1 != nil || err2 != nil {
		f, t := b.Elems[0].Lit(), b.Elems[1].Lit()
		if f == "" || t == "" {
			return maxBraceWords + 1
		}
		from, to = int64(f[0]), int64(t[0])
	}
	step := int64(1)
	if len(b.Elems) > 2 {
		if n, err := strconv.ParseInt(b.Elems[2].Lit(), 10, 64); err == nil && n != 0 && n > math.MinInt64 {
			step = max(n, -n)
		}
	}
	if from > to {
		from, to = to, from
	}
	if to-from < 0 || (to-from)/step >= maxBraceWords {
		return maxBraceWords + 1
	}
	return int((to-from)/step) + 1
}

// source renders the argument as shell source: quoted when static.
func (a arg) source() string {
	if a.static {
		if q, err := syntax.Quote(a.val, syntax.LangBash); err == nil {
			return q
		}
	}
	return a.src
}

// wordArg resolves one word without brace expansion (redirection targets).
func wordArg(w *syntax.Word, src string) arg {
	a := resolveWord(w)
	a.src = sourceText(w, src)
	a.text = shorten(a.src)
	return a
}

func resolveWord(w *syntax.Word) arg {
	a := arg{static: true}
	var b strings.Builder
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(x.Value, "~") {
				a.tilde = true
			}
			unescape(&b, x.Value, &a, false)
		case *syntax.SglQuoted:
			if x.Dollar {
				a.static = false
				continue
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				a.static = false
			}
			for j, p := range x.Parts {
				switch y := p.(type) {
				case *syntax.Lit:
					unescape(&b, y.Value, &a, true)
				case *syntax.ParamExp:
					if i == 0 && j == 0 && isHome(y) {
						a.tilde = true
						b.WriteString("~")
						continue
					}
					a.static = false
				default:
					a.static = false
				}
			}
		case *syntax.ParamExp:
			if i == 0 && isHome(x) {
				a.tilde = true
				b.WriteString("~")
				continue
			}
			a.static = false
		case *syntax.ExtGlob:
			a.glob = true
			b.WriteString(x.Op.String() + x.Pattern.Value + ")")
		default:
			a.static = false
		}
	}
	if a.static {
		a.val = b.String()
	}
	return a
}

// unescape appends a literal's value with backslash escapes applied:
// outside quotes every "\c" is c; inside double quotes only \$ \` \" \\.
func unescape(b *strings.Builder, s string, a *arg, dquoted bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			a.escaped = true
			if dquoted && !strings.ContainsRune("$`\"\\\n", rune(s[i+1])) {
				b.WriteByte(c)
				continue
			}
			i++
			b.WriteByte(s[i])
			continue
		case !dquoted && (c == '*' || c == '?' || c == '['):
			a.glob = true
		}
		b.WriteByte(c)
	}
}

// isHome reports whether p is a plain $HOME or ${HOME}.
func isHome(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "HOME" && p.Flags == nil && !p.Excl && !p.Length &&
		!p.Width && !p.IsSet && p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 &&
		p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// nameProblem says why a word cannot name a command, or "" if it can.
// Quoted literal pieces are joined ("r"m is rm); anything that needs
// expansion, escapes, globbing or brace expansion is refused.
func nameProblem(a arg) string {
	switch {
	case !a.static:
		return "is not statically resolvable"
	case a.val == "[" && !a.escaped:
		return ""
	case a.braces:
		return "uses brace expansion"
	case a.escaped:
		return "uses backslash escapes"
	case a.glob:
		return "is a glob pattern"
	case a.val == "":
		return "is empty"
	}
	for i, c := range a.val {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.ContainsRune("_./+-:@%,", c) || c == '~' && i == 0
		if !ok {
			return "contains shell-special characters"
		}
	}
	return ""
}

// heredoc returns the text a here-document feeds to standard input, and
// false when its body contains expansions.
func heredoc(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, `\`) {
				quoted = true
			}
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(l.Value)
			continue
		}
		s := l.Value
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && strings.ContainsRune("$`\\", rune(s[i+1])) {
				i++
			} else if s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n' {
				i++
				continue
			}
			b.WriteByte(s[i])
		}
	}
	return b.String(), true
}

// sourceText is a node's text in the code it was parsed from.
func sourceText(n syntax.Node, src string) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if n.Pos().IsValid() && end <= uint(len(src)) && start <= end {
		return src[start:end]
	}
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, n); err != nil {
		return "?"
	}
	return buf.String()
}

func shorten(s string) string {
	const limit = 60
	if len(s) <= limit {
		return s
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
