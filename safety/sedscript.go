package safety

import "strings"

// sedScan is what a sed script does beyond editing its input stream.
type sedScan struct {
	exec   bool     // e command or s///e: runs commands
	writes []string // w FILE, W FILE, s///w FILE
	reads  []string // r FILE, R FILE
	ok     bool     // the script was understood
}

// scanSed reads a GNU sed script well enough to find the commands that
// reach outside the stream: e, w, W, r, R and the e and w flags of s.
func scanSed(s string) sedScan {
	sc := sedScan{ok: true}
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := strings.TrimSpace(s[i : i+j])
		i += j
		return v
	}
	// delimited skips a delimited part (regex or replacement) after its
	// opening delimiter d, honouring backslash escapes; in a regex (re),
	// the delimiter is literal inside a bracket expression, as GNU sed
	// reads it (s/[/]/x/ replaces a slash).
	delimited := func(d byte, re bool) bool {
		for i < len(s) {
			switch {
			case s[i] == '\\':
				i += 2
				continue
			case s[i] == d:
				i++
				return true
			case re && s[i] == '[':
				i = bracketEnd(s, i)
				continue
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			i++
			if !delimited('/', true) {
				return false
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d, true) {
				return false
			}
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for i < len(s) {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			break
		}
		if !address() {
			sc.ok = false
			return sc
		}
		if i < len(s) && s[i] == ',' {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				sc.ok = false
				return sc
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			sc.ok = false
			return sc
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', 'a', 'i', 'c':
			restOfLine()
		case ':', 'b', 't', 'T':
			// GNU sed ends a label at ";" (":a;N;$!ba") and at blanks
			// (":a 1e cmd" runs cmd); ending it at "}" too can only make
			// more of the script commands.
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			for i < len(s) && strings.IndexByte(" \t;\n}", s[i]) < 0 {
				i++
			}
		case 'v', 'q', 'Q', 'l', 'L':
			// An optional number (or version), then the command ends.
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
				i++
			}
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				sc.ok = false
				return sc
			}
		case 'e':
			sc.exec = true
			restOfLine()
		case 'w', 'W':
			sc.writes = append(sc.writes, restOfLine())
		case 'r', 'R':
			sc.reads = append(sc.reads, restOfLine())
		case 'y', 's':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				sc.ok = false
				return sc
			}
			d := s[i]
			i++
			if !delimited(d, cmd == 's') || !delimited(d, false) {
				sc.ok = false
				return sc
			}
			if cmd == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				switch s[i] {
				case 'e':
					sc.exec = true
				case 'w':
					i++
					sc.writes = append(sc.writes, restOfLine())
					continue
				case 'g', 'p', 'i', 'I', 'm', 'M', ' ', '\t', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				default:
					sc.ok = false
					return sc
				}
				i++
			}
		default:
			sc.ok = false
			return sc
		}
	}
	return sc
}

// bracketEnd returns the index just past the bracket expression that
// starts at s[i] ('['), or len(s) when it does not end: a leading ^ and a
// ] right after [ or [^ are part of the list, and [:class:], [=c=] and
// [.c.] are skipped whole.
func bracketEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) {
		switch {
		case s[j] == '[' && j+1 < len(s) && strings.IndexByte(":=.", s[j+1]) >= 0:
			end := strings.Index(s[j+2:], string(s[j+1])+"]")
			if end < 0 {
				return len(s)
			}
			j += 2 + end + 2
		case s[j] == ']':
			return j + 1
		default:
			j++
		}
	}
	return len(s)
}
