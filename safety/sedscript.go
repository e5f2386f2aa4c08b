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
	// opening delimiter d, honouring backslash escapes.
	delimited := func(d byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
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
			if !delimited('/') {
				return false
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
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
		case ':', 'b', 't', 'T', 'v', 'q', 'Q', 'l', 'L':
			// GNU sed ends a label at ";" (":a;N;$!ba"), so ":a;e cmd" runs cmd.
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				i++
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
			if !delimited(d) || !delimited(d) {
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
