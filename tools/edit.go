package tools

import (
	"fmt"
	"regexp"
	"strings"
)

// EditError is a model-fixable reason an edit cannot be made.
type EditError struct{ Msg string }

func (e *EditError) Error() string { return e.Msg }

// Edit replaces pattern in content, the pure heart of edit_file. pattern is
// a literal string, or a Go regular expression (RE2 syntax) when regex is
// set; then replacement may use $1, ${name}, and the Python forms \1 and
// \g<name>, which are translated. count 0 asks for exactly one match: none
// or more than one is an *EditError ("ambiguous: 3 matches; …"). count N > 0
// replaces the first N matches (all of them if fewer), count -1 all; zero
// matches is always an error. It returns the new content and how many
// replacements it made.
func Edit(content, pattern, replacement string, regex bool, count int) (string, int, error) {
	if pattern == "" {
		return "", 0, &EditError{"search_pattern is empty"}
	}
	if count < -1 {
		return "", 0, &EditError{fmt.Sprintf("count %d: use a positive number, or -1 for all matches", count)}
	}
	var re *regexp.Regexp
	if regex {
		var err error
		if re, err = regexp.Compile(pattern); err != nil {
			return "", 0, &EditError{fmt.Sprintf("search_pattern is not a valid regular expression (Go RE2 syntax): %v", err)}
		}
	}
	var locs [][]int
	if re != nil {
		locs = re.FindAllStringSubmatchIndex(content, -1)
	} else {
		locs = literalMatches(content, pattern)
	}
	switch {
	case len(locs) == 0:
		kind := "text"
		if regex {
			kind = "regular expression"
		}
		return "", 0, &EditError{fmt.Sprintf("search_pattern not found: the %s %q does not occur in the file", kind, pattern)}
	case count == 0 && len(locs) > 1:
		return "", 0, &EditError{fmt.Sprintf("ambiguous: %d matches; set count or make the pattern unique", len(locs))}
	}
	if count > 0 && count < len(locs) {
		locs = locs[:count]
	}
	tmpl := replacement
	if re != nil {
		tmpl = pythonGroups(replacement)
	}
	var b strings.Builder
	b.Grow(max(len(content)+len(locs)*(len(replacement)-len(pattern)), 0))
	last := 0
	for _, m := range locs {
		b.WriteString(content[last:m[0]])
		if re != nil {
			b.Write(re.ExpandString(nil, tmpl, content, m))
		} else {
			b.WriteString(replacement)
		}
		last = m[1]
	}
	b.WriteString(content[last:])
	return b.String(), len(locs), nil
}

// literalMatches returns the non-overlapping occurrences of pattern.
func literalMatches(s, pattern string) [][]int {
	var locs [][]int
	for off := 0; ; {
		i := strings.Index(s[off:], pattern)
		if i < 0 {
			return locs
		}
		locs = append(locs, []int{off + i, off + i + len(pattern)})
		off += i + len(pattern)
	}
}

var pyGroup = regexp.MustCompile(`\\(\d{1,2})|\\g<(\w+)>`)

// pythonGroups turns \1 and \g<name> into ${1} and ${name}; a literal $
// stays literal unless it starts a Go reference.
func pythonGroups(r string) string {
	if !strings.Contains(r, `\`) {
		return r
	}
	return pyGroup.ReplaceAllStringFunc(r, func(m string) string {
		sm := pyGroup.FindStringSubmatch(m)
		if sm[1] != "" {
			return "${" + sm[1] + "}"
		}
		return "${" + sm[2] + "}"
	})
}
