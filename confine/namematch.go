package confine

import (
	"path"
	"strings"
)

// nameMatcher answers path.Match for a list of base-name patterns, fast
// for the shapes secret names take (an exact name, NAME*, *NAME, *NAME*):
// the walk for secrets asks it once per entry of a home, and path.Match
// over every pattern was most of a launcher's set-up (perf, 100-host
// fan-out). Other patterns, and every pattern with ?, [ or \, go to
// path.Match as before: the answer is path.Match's for every pattern.
type nameMatcher struct {
	exact                    map[string]bool
	prefix, suffix, contains []string
	other                    []string
}

func newNameMatcher(pats []string) *nameMatcher {
	m := &nameMatcher{exact: map[string]bool{}}
	for _, p := range pats {
		if strings.ContainsAny(p, `?[\`) {
			m.other = append(m.other, p)
			continue
		}
		inner := strings.Trim(p, "*")
		lead, trail := strings.HasPrefix(p, "*"), strings.HasSuffix(p, "*")
		switch {
		case strings.Contains(inner, "*") || inner == "" || strings.Contains(p, "/"):
			m.other = append(m.other, p)
		case lead && trail:
			m.contains = append(m.contains, inner)
		case lead:
			m.suffix = append(m.suffix, inner)
		case trail:
			m.prefix = append(m.prefix, inner)
		default:
			m.exact[p] = true
		}
	}
	return m
}

// match reports whether name (a base name, no "/") matches a pattern.
func (m *nameMatcher) match(name string) bool {
	if m.exact[name] {
		return true
	}
	for _, s := range m.prefix {
		if strings.HasPrefix(name, s) {
			return true
		}
	}
	for _, s := range m.suffix {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	for _, s := range m.contains {
		if strings.Contains(name, s) {
			return true
		}
	}
	for _, p := range m.other {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
