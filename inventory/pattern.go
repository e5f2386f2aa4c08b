package inventory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is Ansible's host pattern language (inventory/manager.py).

var (
	rePatternSplit = regexp.MustCompile(`(?:[^\s:\[\]]|\[[^\]]*\])+`)
	reSubscript    = regexp.MustCompile(`^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$`)
)

// SplitPattern splits a host pattern into its parts as Ansible's
// split_host_pattern does: on commas if there are any, else on colons
// that are not part of a host:port, an IPv6 address or a [x:y] range.
func SplitPattern(pattern string) []string {
	var parts []string
	switch {
	case strings.Contains(pattern, ","):
		parts = strings.Split(pattern, ",")
	default:
		if _, _, ok := parseAddress(pattern); ok {
			parts = []string{pattern}
		} else {
			parts = rePatternSplit.FindAllString(pattern, -1)
		}
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Select returns the hosts matching pattern in the order Ansible gives for
// `ansible PATTERN --list-hosts`. An empty pattern is "all". Parts are
// separated by "," or ":"; a part is a host or group name, a glob
// (*.example.com), a regex (~web0[1-3]), optionally with a subscript
// (web[0], web[-1], web[0:4]), and is a union by default, an intersection
// with "&" or an exclusion with "!". Like Ansible, unions apply first,
// then intersections, then exclusions, whatever order they are written
// in. A part matching nothing adds nothing; a subscript outside the
// matched hosts and an invalid regex are errors.
//
// A malformed pattern — an unclosed or stray bracket ("web[", "web[1",
// "~[", "web]"), which Ansible's split silently drops and so widens to a
// whole group or every host — is an error naming it (MalformedPattern).
func (inv *Inventory) Select(pattern string) ([]*Host, error) {
	if err := checkPattern(pattern); err != nil {
		return nil, err
	}
	return inv.selectParts(SplitPattern(pattern))
}

// MalformedPattern is a host pattern with brackets Ansible would drop.
type MalformedPattern struct {
	Pattern string
	Why     string
}

func (e *MalformedPattern) Error() string {
	return fmt.Sprintf("malformed host pattern %q: %s", e.Pattern, e.Why)
}

// checkPattern refuses what Ansible's split_host_pattern drops without a
// word: for a colon-separated pattern, characters that belong to no part
// (the "[" of "web[1"); for a comma-separated one, a part (other than a
// ~regex) whose brackets do not close.
func checkPattern(pattern string) error {
	if strings.Contains(pattern, ",") {
		for _, p := range strings.Split(pattern, ",") {
			p = strings.TrimSpace(p)
			if p == "" || strings.HasPrefix(strings.TrimLeft(p, "!&"), "~") {
				continue
			}
			if why := bracketProblem(p); why != "" {
				return &MalformedPattern{Pattern: pattern, Why: why}
			}
		}
		return nil
	}
	if _, _, ok := parseAddress(pattern); ok {
		return nil
	}
	last := 0
	for _, m := range rePatternSplit.FindAllStringIndex(pattern, -1) {
		if gap := strings.Trim(pattern[last:m[0]], ": \t\r\n\f\v"); gap != "" {
			return &MalformedPattern{Pattern: pattern, Why: fmt.Sprintf("%q is not part of any host or group pattern (an unclosed or stray bracket?)", gap)}
		}
		last = m[1]
	}
	if gap := strings.Trim(pattern[last:], ": \t\r\n\f\v"); gap != "" {
		return &MalformedPattern{Pattern: pattern, Why: fmt.Sprintf("%q is not part of any host or group pattern (an unclosed or stray bracket?)", gap)}
	}
	return nil
}

// bracketProblem says what is wrong with p's brackets, "" if nothing.
func bracketProblem(p string) string {
	open := false
	for _, c := range p {
		switch c {
		case '[':
			if open {
				return "a \"[\" inside brackets"
			}
			open = true
		case ']':
			if !open {
				return "a \"]\" without its \"[\""
			}
			open = false
		}
	}
	if open {
		return "an unclosed \"[\""
	}
	return ""
}

// selectParts is Select over a pattern already split into parts.
func (inv *Inventory) selectParts(parts []string) ([]*Host, error) {
	var regular, inter, excl []string
	for _, p := range parts {
		switch p[0] {
		case '!':
			excl = append(excl, p)
		case '&':
			inter = append(inter, p)
		default:
			regular = append(regular, p)
		}
	}
	if len(regular) == 0 {
		regular = []string{"all"}
	}
	var hosts []*Host
	for _, p := range append(append(regular, inter...), excl...) {
		if h := inv.hostIdx[p]; h != nil {
			hosts = append(hosts, h)
			continue
		}
		that, err := inv.matchOne(p)
		if err != nil {
			return nil, err
		}
		switch p[0] {
		case '!', '&':
			set := make(map[*Host]bool, len(that))
			for _, h := range that {
				set[h] = true
			}
			keep := p[0] == '&'
			out := hosts[:0]
			for _, h := range hosts {
				if set[h] == keep {
					out = append(out, h)
				}
			}
			hosts = out
		default:
			existing := make(map[*Host]bool, len(hosts))
			for _, h := range hosts {
				existing[h] = true
			}
			for _, h := range that {
				if !existing[h] {
					hosts = append(hosts, h)
				}
			}
		}
	}
	return dedupe(hosts), nil
}

// Limit returns the hosts matching pattern in inventory order (the order
// of "all"), which is what --limit does to a play over all hosts. An empty
// pattern selects every host. A part "@FILE" stands for the lines of
// FILE, each a pattern (a retry file: one host a line), as in Ansible.
func (inv *Inventory) Limit(pattern string) ([]*Host, error) {
	all := inv.Hosts()
	if strings.TrimSpace(pattern) == "" {
		return all, nil
	}
	if err := checkPattern(pattern); err != nil {
		return nil, err
	}
	var parts []string
	files := false
	for _, p := range SplitPattern(pattern) {
		if !strings.HasPrefix(p, "@") {
			parts = append(parts, p)
			continue
		}
		files = true
		lines, err := limitFile(p[1:])
		if err != nil {
			return nil, err
		}
		parts = append(parts, lines...)
	}
	if len(parts) == 0 && files {
		// Only empty limit files: Ansible then selects every host; here
		// nothing (a run refuses an empty selection).
		return nil, nil
	}
	sel, err := inv.selectParts(parts)
	if err != nil {
		return nil, err
	}
	in := make(map[*Host]bool, len(sel))
	for _, h := range sel {
		in[h] = true
	}
	out := all[:0:0]
	for _, h := range all {
		if in[h] {
			out = append(out, h)
		}
	}
	return out, nil
}

// matchOne is Ansible's _match_one_pattern: the part without its & or !,
// its subscript applied.
func (inv *Inventory) matchOne(p string) ([]*Host, error) {
	if p[0] == '&' || p[0] == '!' {
		p = p[1:]
	}
	if p == "" {
		return nil, nil
	}
	expr, sub := splitSubscript(p)
	hosts, err := inv.enumerate(expr)
	if err != nil {
		return nil, err
	}
	if sub == nil || len(hosts) == 0 {
		return hosts, nil
	}
	start, end := sub[0], sub[1]
	if end == noEnd || end == 0 { // Ansible: a zero end means a single index
		i := start
		if i < 0 {
			i += len(hosts)
		}
		if i < 0 || i >= len(hosts) {
			return nil, fmt.Errorf("no hosts matched the subscripted pattern %q", p)
		}
		return []*Host{hosts[i]}, nil
	}
	if end == -1 {
		end = len(hosts) - 1
	}
	if start >= len(hosts) || start > end {
		return nil, nil
	}
	if end+1 > len(hosts) {
		end = len(hosts) - 1
	}
	return hosts[start : end+1], nil
}

const noEnd = -1 << 40

// splitSubscript takes "expr[3]", "expr[-1]", "expr[1:4]", "expr[2:]" apart.
// A regex (~…) never has one.
func splitSubscript(p string) (string, *[2]int) {
	if p[0] == '~' {
		return p, nil
	}
	m := reSubscript.FindStringSubmatch(p)
	if m == nil {
		return p, nil
	}
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil { // too many digits: far past any inventory
			if strings.HasPrefix(s, "-") {
				return -(1 << 39)
			}
			return 1 << 39
		}
		return n
	}
	if m[2] != "" {
		return m[1], &[2]int{num(m[2]), noEnd}
	}
	end := -1
	if m[5] != "" {
		end = num(m[5])
	}
	return m[1], &[2]int{num(m[3]), end}
}

// enumerate is Ansible's _enumerate_matches: every host of every group
// whose name matches, then (if no group matched, or the pattern is a
// regex or has . ? * [) every host whose name matches. Duplicates are
// kept, as subscripts index this list.
func (inv *Inventory) enumerate(expr string) ([]*Host, error) {
	re, err := compilePattern(expr)
	if err != nil {
		return nil, err
	}
	var out []*Host
	matched := false
	for _, g := range inv.groups {
		if re.MatchString(g.Name) {
			matched = true
			out = append(out, inv.groupHosts(g)...)
		}
	}
	if !matched || expr[0] == '~' || strings.ContainsAny(expr, ".?*[") {
		for _, h := range inv.hosts {
			if re.MatchString(h.Name) {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// compilePattern turns "~regex" into a regex matched at the start of a
// name (Python's re.match) and anything else into a shell glob matched
// against the whole name (Python's fnmatch, case-sensitive).
func compilePattern(expr string) (*regexp.Regexp, error) {
	if expr[0] == '~' {
		re, err := regexp.Compile(`^(?:` + expr[1:] + `)`)
		if err != nil {
			return nil, fmt.Errorf("invalid host pattern %q: %v", expr, err)
		}
		return re, nil
	}
	re, err := regexp.Compile(globRegexp(expr))
	if err != nil {
		return nil, fmt.Errorf("invalid host pattern %q: %v", expr, err)
	}
	return re, nil
}

// globRegexp is Python's fnmatch.translate: * any string, ? one
// character, [abc] [a-z] [!abc] a set, an unclosed [ itself.
func globRegexp(pat string) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	rs := []rune(pat)
	for i := 0; i < len(rs); {
		c := rs[i]
		i++
		switch c {
		case '*':
			for i < len(rs) && rs[i] == '*' {
				i++
			}
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(globClass(rs[i:j]))
			i = j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return b.String()
}

// globClass translates the inside of a [...] set.
func globClass(stuff []rune) string {
	neg := false
	if len(stuff) > 0 && stuff[0] == '!' {
		neg, stuff = true, stuff[1:]
	}
	var items []string
	for i := 0; i < len(stuff); {
		if i+2 < len(stuff) && stuff[i+1] == '-' {
			lo, hi := stuff[i], stuff[i+2]
			if lo <= hi { // Python drops reversed ranges
				items = append(items, classChar(lo)+"-"+classChar(hi))
			}
			i += 3
			continue
		}
		items = append(items, classChar(stuff[i]))
		i++
	}
	switch {
	case len(items) == 0 && !neg:
		return `[^\x00-\x{10FFFF}]` // an empty set matches nothing
	case len(items) == 0:
		return `.`
	case neg:
		return `[^` + strings.Join(items, "") + `]`
	}
	return `[` + strings.Join(items, "") + `]`
}

func classChar(r rune) string {
	if r < utf8.RuneSelf && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
		return `\x{` + strconv.FormatInt(int64(r), 16) + `}`
	}
	return string(r)
}

// maxLimitFile bounds a --limit @FILE.
const maxLimitFile = 16 << 20

// limitFile reads a --limit @FILE: its lines, stripped, empty ones left
// out; each is checked as a pattern.
func limitFile(name string) ([]string, error) {
	if name == "" {
		return nil, errors.New("@ needs a file name (--limit @FILE)")
	}
	f, err := os.Open(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("limit file %s: %v", name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("limit file %s: is a directory (a limit starting with @ names a file)", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLimitFile+1))
	if err != nil {
		return nil, fmt.Errorf("limit file %s: %v", name, err)
	}
	if len(data) > maxLimitFile {
		return nil, fmt.Errorf("limit file %s: larger than %d bytes", name, maxLimitFile)
	}
	var out []string
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@") {
			return nil, fmt.Errorf("limit file %s:%d: %q: a limit file cannot name another", name, i+1, l)
		}
		if err := checkPattern(l); err != nil {
			return nil, fmt.Errorf("limit file %s:%d: %w", name, i+1, err)
		}
		out = append(out, l)
	}
	return out, nil
}
