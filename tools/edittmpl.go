package tools

import (
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// template is a replacement split into literal text and group references,
// so that a replacement's size per match is known without expanding it. It
// follows regexp.Regexp.Expand exactly: $$ is "$", $name and ${name} are a
// group (by number when name is all digits without a leading zero, else by
// name: the first group of that name that matched), a group that does not
// exist or did not match is empty, and a malformed $ is literal.
type template struct {
	parts []tmplPart
	lit   int64      // total length of the literal parts
	refs  []groupRef // how often each group reference occurs
}

type tmplPart struct {
	lit string
	ref int // index into refs; -1 for literal text
}

type groupRef struct {
	groups []int // candidate group indexes, first matched wins
	n      int64 // occurrences in the template
}

func literalTemplate(s string) *template {
	return &template{parts: []tmplPart{{lit: s, ref: -1}}, lit: int64(len(s))}
}

func parseTemplate(re *regexp.Regexp, tmpl string) *template {
	t := &template{}
	byKey := map[string]int{}
	addLit := func(s string) {
		if s == "" {
			return
		}
		t.lit += int64(len(s))
		if n := len(t.parts); n > 0 && t.parts[n-1].ref < 0 {
			t.parts[n-1].lit += s
			return
		}
		t.parts = append(t.parts, tmplPart{lit: s, ref: -1})
	}
	addRef := func(key string, groups []int) {
		i, ok := byKey[key]
		if !ok {
			i = len(t.refs)
			byKey[key] = i
			t.refs = append(t.refs, groupRef{groups: groups})
		}
		t.refs[i].n++
		t.parts = append(t.parts, tmplPart{ref: i})
	}
	names := re.SubexpNames()
	for len(tmpl) > 0 {
		before, after, ok := strings.Cut(tmpl, "$")
		if !ok {
			break
		}
		addLit(before)
		tmpl = after
		if tmpl != "" && tmpl[0] == '$' {
			addLit("$")
			tmpl = tmpl[1:]
			continue
		}
		name, num, rest, ok := extractName(tmpl)
		if !ok {
			addLit("$")
			continue
		}
		tmpl = rest
		if num >= 0 {
			if num <= re.NumSubexp() {
				addRef("#"+name, []int{num})
			}
			continue
		}
		var groups []int
		for i, n := range names {
			if n == name {
				groups = append(groups, i)
			}
		}
		if groups != nil {
			addRef(name, groups)
		}
	}
	addLit(tmpl)
	return t
}

// extractName is regexp's extract: the name after a $, as a number when it
// is one.
func extractName(str string) (name string, num int, rest string, ok bool) {
	if str == "" {
		return
	}
	brace := false
	if str[0] == '{' {
		brace = true
		str = str[1:]
	}
	i := 0
	for i < len(str) {
		r, size := utf8.DecodeRuneInString(str[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			break
		}
		i += size
	}
	if i == 0 {
		return
	}
	name = str[:i]
	if brace {
		if i >= len(str) || str[i] != '}' {
			return
		}
		i++
	}
	num = 0
	for j := 0; j < len(name); j++ {
		if name[j] < '0' || '9' < name[j] || num >= 1e8 {
			num = -1
			break
		}
		num = num*10 + int(name[j]) - '0'
	}
	if name[0] == '0' && len(name) > 1 {
		num = -1
	}
	return name, num, str[i:], true
}

// span returns the span of ref's group in match m, or -1, -1.
func (r groupRef) span(m []int) (int, int) {
	for _, g := range r.groups {
		if 2*g+1 < len(m) && m[2*g] >= 0 {
			return m[2*g], m[2*g+1]
		}
	}
	return -1, -1
}

// size is the length of the replacement for match m, at most
// math.MaxInt64.
func (t *template) size(m []int) int64 {
	n := t.lit
	for _, r := range t.refs {
		if a, b := r.span(m); a >= 0 {
			l := int64(b - a)
			if l > 0 && r.n > (math.MaxInt64-n)/l {
				return math.MaxInt64
			}
			n += r.n * l
		}
	}
	return n
}

// write appends the replacement for match m of src to b.
func (t *template) write(b *strings.Builder, src string, m []int) {
	for _, p := range t.parts {
		if p.ref < 0 {
			b.WriteString(p.lit)
		} else if a, e := t.refs[p.ref].span(m); a >= 0 {
			b.WriteString(src[a:e])
		}
	}
}
