package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is Ansible's host-name grammar (parsing/utils/addresses.py)
// and range expansion (plugins/inventory/__init__.py), which the INI and
// YAML formats and host patterns share.

const (
	numericRange      = `\[(?:[0-9]+:[0-9]+)(?::[0-9]+)?\]`
	hexadecimalRange  = `\[(?:[0-9a-f]+:[0-9a-f]+)(?::[0-9]+)?\]`
	alphanumericRange = `\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]`
	ipv4Component     = `(?:[01]?[0-9]{1,2}|2[0-4][0-9]|25[0-5]|` + numericRange + `)`
	ipv6Component     = `(?:[0-9a-f]{1,4}|` + hexadecimalRange + `)`
)

var (
	reBracketedHostPort = regexp.MustCompile(`^\[(.+)\]:([0-9]+)$`)
	reHostPort          = regexp.MustCompile(`^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$`)
	reIPv4              = regexp.MustCompile(`(?i)^(?:` + ipv4Component + `\.){3}` + ipv4Component + `$`)
	reIPv6              = regexp.MustCompile(`(?i)^(?:` + strings.ReplaceAll(
		`(?:C:){7}C|(?:C:){1,6}:|(?:C:)(?::C){1,6}|(?:C:){2}(?::C){1,5}|(?:C:){3}(?::C){1,4}|`+
			`(?:C:){4}(?::C){1,3}|(?:C:){5}(?::C){1,2}|(?:C:){6}(?::C)|:(?::C){1,6}|C?::|`+
			`(?:0:){6}(?:C\.){3}C|::(?:ffff:)?(?:C\.){3}C|(?:0:){5}ffff:(?:C\.){3}C`,
		"C", ipv6Component) + `)$`)
	reAlphaRange = regexp.MustCompile(`(?i)^` + alphanumericRange)
)

// parseAddress splits "host:port", "[v6]:port" and plain hosts the way
// Ansible's parse_address(allow_ranges=True) does. ok is false when the
// host part is not a valid IPv4/IPv6 address or host name (ranges allowed).
func parseAddress(s string) (host string, port int, ok bool) {
	addr := s
	for _, re := range []*regexp.Regexp{reBracketedHostPort, reHostPort} {
		if m := re.FindStringSubmatch(addr); m != nil {
			p, err := strconv.Atoi(m[2])
			if err != nil {
				return "", 0, false
			}
			addr, port = m[1], p
		}
	}
	if reIPv4.MatchString(addr) || reIPv6.MatchString(addr) || validHostname(addr) {
		return addr, port, true
	}
	return "", 0, false
}

// validHostname is Ansible's "hostname" pattern: dot-separated labels of
// word characters and dashes (not ending with - or _), ranges allowed.
func validHostname(s string) bool {
	if s == "" {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return false
		}
		first := true
		var last rune
		for i := 0; i < len(label); {
			if label[i] == '[' {
				m := reAlphaRange.FindString(label[i:])
				if m == "" {
					return false
				}
				i += len(m)
				last, first = ']', false
				continue
			}
			r, size := utf8.DecodeRuneInString(label[i:])
			word := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
			if !word && (first || r != '-') {
				return false
			}
			i += size
			last, first = r, false
		}
		if last == '-' || last == '_' {
			return false
		}
	}
	return true
}

// expandHostPattern turns one host entry into host names and an optional
// port (0 if none), as BaseInventoryPlugin._expand_hostpattern does.
func expandHostPattern(pattern string) ([]string, int, error) {
	host, port, ok := parseAddress(pattern)
	if !ok {
		host, port = pattern, 0
	}
	if !strings.Contains(host, "[") {
		return []string{host}, port, nil
	}
	names, err := expandRange(host, 0)
	return names, port, err
}

// maxRangeHosts bounds what one entry may expand to, so a typo such as
// web[1:999999999] is an error rather than an exhausted machine.
const maxRangeHosts = 100000

const asciiLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// expandRange expands the first [beg:end(:step)] of line, then the rest,
// like Ansible's expand_hostname_range: numeric ranges keep the width of
// a zero-padded beginning (01:20 → 01…20), alphabetic ranges run through
// a…zA…Z.
func expandRange(line string, depth int) ([]string, error) {
	if depth > 20 {
		return nil, fmt.Errorf("host range %q has too many ranges", line)
	}
	open := strings.IndexByte(line, '[')
	if open < 0 {
		return []string{line}, nil
	}
	rest := line[open+1:]
	// Python: replace the first "[" and the first "]" with "|" and split
	// on "|": exactly three parts or it is an error.
	closeAll := strings.IndexByte(line, ']')
	if closeAll < 0 {
		return nil, fmt.Errorf("host range %q has no closing ]", line)
	}
	if closeAll < open {
		return nil, fmt.Errorf("host range %q has ] before [", line)
	}
	closeRel := closeAll - open - 1
	head, nrange, tail := line[:open], rest[:closeRel], rest[closeRel+1:]
	if strings.ContainsRune(head+nrange+tail, '|') {
		return nil, fmt.Errorf("host range %q contains |", line)
	}
	bounds := strings.Split(nrange, ":")
	if len(bounds) != 2 && len(bounds) != 3 {
		return nil, fmt.Errorf("host range [%s] must be begin:end or begin:end:step", nrange)
	}
	beg, end, step := bounds[0], bounds[1], "1"
	if len(bounds) == 3 {
		step = bounds[2]
	}
	if beg == "" {
		beg = "0"
	}
	if end == "" {
		return nil, fmt.Errorf("host range [%s] must specify an end value", nrange)
	}
	width := 0
	if beg[0] == '0' && len(beg) > 1 {
		width = len(beg)
		if width != len(end) {
			return nil, fmt.Errorf("host range [%s] must have begin and end of the same width", nrange)
		}
	}
	st, err := pyInt(step)
	if err != nil {
		return nil, fmt.Errorf("host range [%s]: bad step %q", nrange, step)
	}
	var seq []string
	ib, ie := strings.Index(asciiLetters, beg), strings.Index(asciiLetters, end)
	if ib >= 0 && ie >= 0 && st != 0 {
		if ib > ie {
			return nil, fmt.Errorf("host range [%s] must have begin <= end", nrange)
		}
		for _, i := range pySlice(ib, ie+1, st) {
			seq = append(seq, asciiLetters[i:i+1])
		}
	} else {
		b, err1 := pyInt(beg)
		e, err2 := pyInt(end)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("host range [%s] must be numeric or a single letter each side", nrange)
		}
		if st == 0 {
			return nil, fmt.Errorf("host range [%s]: step must not be zero", nrange)
		}
		if n := rangeLen(b, e+1, st); n > maxRangeHosts {
			return nil, fmt.Errorf("host range [%s] expands to %d hosts, more than %d", nrange, n, maxRangeHosts)
		}
		for i := b; (st > 0 && i < e+1) || (st < 0 && i > e+1); i += st {
			s := strconv.Itoa(i)
			if width > 0 {
				s = zfill(s, width)
			}
			seq = append(seq, s)
		}
	}
	var out []string
	for _, s := range seq {
		name := head + s + tail
		if strings.Contains(name, "[") {
			more, err := expandRange(name, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		} else {
			out = append(out, name)
		}
		if len(out) > maxRangeHosts {
			return nil, fmt.Errorf("host range %q expands to more than %d hosts", line, maxRangeHosts)
		}
	}
	return out, nil
}

// pySlice returns the indexes Python's range(start, stop, step) yields
// when used to slice (step may be negative).
func pySlice(start, stop, step int) []int {
	var out []int
	if step > 0 {
		for i := start; i < stop; i += step {
			out = append(out, i)
		}
	} else {
		// Python slicing with a negative step over [ib:ie+1] yields
		// nothing when start < stop, which is the only case here.
		for i := start; i > stop; i += step {
			out = append(out, i)
		}
	}
	return out
}

func rangeLen(start, stop, step int) int {
	switch {
	case step > 0 && stop > start:
		return (stop - start + step - 1) / step
	case step < 0 && stop < start:
		return (start - stop - step - 1) / -step
	}
	return 0
}

// zfill is Python's str.zfill: pad with zeros after any sign.
func zfill(s string, width int) string {
	sign := ""
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		sign, s = s[:1], s[1:]
	}
	for len(sign)+len(s) < width {
		s = "0" + s
	}
	return sign + s
}

// pyInt is Python's int(str) for the forms a range can hold: optional
// surrounding whitespace, sign, digits with single underscores between.
func pyInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	t := s
	if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") {
		t = t[1:]
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return 0, fmt.Errorf("invalid integer %q", s)
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || n > 1<<40 || n < -(1<<40) {
		return 0, fmt.Errorf("invalid integer %q", s)
	}
	return n, nil
}
