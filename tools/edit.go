package tools

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// EditError is a model-fixable reason an edit cannot be made.
type EditError struct{ Msg string }

func (e *EditError) Error() string { return e.Msg }

// MaxEditBytes bounds Edit's result when no smaller limit is given: an
// edit is built in memory, and a runaway one (a short, frequent pattern
// replaced by a long text) must fail as a tool error, not exhaust memory.
const MaxEditBytes = 1 << 30

// Edit replaces pattern in content, the pure heart of edit_file. pattern is
// a literal string, or a Go regular expression (RE2 syntax) when regex is
// set; then replacement may use $1, ${name}, and the Python forms \1 and
// \g<name>, which are translated. count 0 asks for exactly one match: none
// or more than one is an *EditError ("ambiguous: 3 matches; …"). count N > 0
// replaces the first N matches (all of them if fewer), count -1 all; zero
// matches is always an error. It returns the new content and how many
// replacements it made. The result is bounded to MaxEditBytes (EditLimit).
func Edit(content, pattern, replacement string, regex bool, count int) (string, int, error) {
	return EditLimit(content, pattern, replacement, regex, count, MaxEditBytes)
}

// EditLimit is Edit with the result bounded to maxBytes (the policy's
// MaxWriteBytes; <= 0 or above MaxEditBytes means MaxEditBytes). The size
// is computed from the matches before anything is built: a result over the
// limit is an *EditError ("the edit would make the file N bytes, over the
// limit M") and costs no memory.
func EditLimit(content, pattern, replacement string, regex bool, count int, maxBytes int64) (string, int, error) {
	if maxBytes <= 0 || maxBytes > MaxEditBytes {
		maxBytes = MaxEditBytes
	}
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
		// A file whose lines end in CRLF, a pattern of several lines
		// written with LF: the lines are matched, and the replacement's
		// lines end as the file's do.
		if len(locs) == 0 && crlfOnly(content) && strings.Contains(pattern, "\n") && !strings.Contains(pattern, "\r") {
			if l := literalMatches(content, toCRLF(pattern)); len(l) > 0 {
				locs, pattern, replacement = l, toCRLF(pattern), toCRLF(replacement)
			}
		}
	}
	switch {
	case len(locs) == 0:
		kind := "text"
		if regex {
			kind = "regular expression"
		}
		hint := ""
		if strings.Contains(content, "\r\n") {
			hint = " (the file's lines end in CRLF, \\r\\n"
			if regex {
				hint += ": match \\r?\\n"
			}
			hint += ")"
		}
		return "", 0, &EditError{fmt.Sprintf("search_pattern not found: the %s %q does not occur in the file%s", kind, pattern, hint)}
	case count == 0 && len(locs) > 1:
		return "", 0, &EditError{fmt.Sprintf("ambiguous: %d matches; set count or make the pattern unique", len(locs))}
	}
	if count > 0 && count < len(locs) {
		locs = locs[:count]
	}
	tmpl := literalTemplate(replacement)
	if re != nil {
		tmpl = parseTemplate(re, pythonGroups(replacement))
	}
	var added, removed int64
	for _, m := range locs {
		added = satAdd(added, tmpl.size(m))
		removed += int64(m[1] - m[0])
	}
	size := satAdd(int64(len(content))-removed, added)
	if size > maxBytes {
		return "", 0, &EditError{fmt.Sprintf("the edit would make the file %d bytes, over the limit %d", size, maxBytes)}
	}
	var b strings.Builder
	b.Grow(int(size))
	last := 0
	for _, m := range locs {
		b.WriteString(content[last:m[0]])
		tmpl.write(&b, content, m)
		last = m[1]
	}
	b.WriteString(content[last:])
	return b.String(), len(locs), nil
}

// crlfOnly reports whether s has line ends and each is CRLF.
func crlfOnly(s string) bool {
	n := strings.Count(s, "\n")
	return n > 0 && strings.Count(s, "\r\n") == n
}

// toCRLF ends each of s's lines with CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// satAdd adds two sizes (>= 0), stopping at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// literalMatches returns the non-overlapping occurrences of pattern.
func literalMatches(s, pattern string) [][]int {
	var flat []int // one backing array: a file can hold millions of matches
	for off := 0; ; {
		i := strings.Index(s[off:], pattern)
		if i < 0 {
			break
		}
		flat = append(flat, off+i, off+i+len(pattern))
		off += i + len(pattern)
	}
	locs := make([][]int, len(flat)/2)
	for i := range locs {
		locs[i] = flat[2*i : 2*i+2 : 2*i+2]
	}
	return locs
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
