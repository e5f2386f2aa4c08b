package redact

import "strconv"

// The numeric view: a dump's lines of octal or decimal numbers (od's
// default, od -b, -d, -i, -t u1 and -t d1, hexdump -d and -o, with or
// without an offset column; Python's list(b"…")) read as the bytes they
// stand for, by the decoded view's pass (scanDecoded), and fed to the
// squeezed automaton: a value dumped so is found as it is, at any
// alignment in the dump's words, across lines. Which base and word size
// a dump has is not known: each of base 8 and 10 and words of 1, 2, 4
// and 8 bytes (little-endian, as od shows them on the machines agent
// runs on) has a feeder of its own; a number that cannot be in its
// reading (an 8 in octal, a value too large for the word) puts that one
// back at the root, as a line that is not numbers puts them all.

// numStart is true for the bytes a line of numbers may start with.
var numStart = func() (t [256]bool) {
	for _, c := range []byte(" \t[-0123456789") {
		t[c] = true
	}
	return t
}()

// numericLine reports whether s[from:to] is numbers alone (one at least:
// od -w1 shows one a line, a dump's last line may have one): digits with
// an optional '-', separated by white space or commas, in brackets or
// not.
func numericLine(s string, from, to int) bool {
	runs := 0
	for i := from; i < to; i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if i == from || s[i-1] < '0' || s[i-1] > '9' {
				runs++
			}
		case c == ' ' || c == ',' || c == '-' || c == '[' || c == ']' || c == '\t' || c == '\r':
		default:
			return false
		}
	}
	return runs >= 1
}

// numericLines reports whether a line of s is numbers alone (dumpLine's
// numeric lines: numStart, then numericLine), for a text with no space
// or ':' (scanHex), where no line has a dump's offset column: numbers one
// a line (`od -An -tu1 -v -w1 | tr -d ' '`), separated by commas
// (`tr -s ' ' ,`, `jq -c explode`: "[104,117,…]") or one 64-bit word
// alone (`od -An -tu8`: one line for an 8-byte value). Each line is given
// up at its first byte that cannot be in such a line.
func numericLines(s string) bool {
	for at := 0; at < len(s); {
		end := lineEnd(s, at)
		if at < end && numStart[s[at]] && numericLine(s, at, end) {
			return true
		}
		at = end + 1
	}
	return false
}

// numReadings are the bases and word sizes a line of numbers is read in.
var numReadings = []struct{ base, width int }{{8, 1}, {10, 1}, {8, 2}, {10, 2}, {8, 4}, {10, 4}, {8, 8}, {10, 8}}

// numFeeders are the squeezed automaton's feeders of one text's numeric
// view: one a reading.
type numFeeders struct {
	f []*feeder
}

func newNumFeeders(a *automaton) *numFeeders {
	n := &numFeeders{}
	for range numReadings {
		n.f = append(n.f, newFeeder(a, nil))
	}
	return n
}

// reset puts every reading back at the root.
func (n *numFeeders) reset() {
	for _, f := range n.f {
		f.state = 0
	}
}

// line feeds the numbers of s[from:to] (a numericLine) in each reading:
// each number's bytes, least significant first, each from the number's
// raw bytes.
func (n *numFeeders) line(s string, from, to int) {
	for i := from; i < to; {
		c := s[i]
		if c != '-' && (c < '0' || c > '9') {
			i++
			continue
		}
		j := i + 1
		for j < to && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		tok := s[i:j]
		for r, rd := range numReadings {
			f := n.f[r]
			x, ok := parseNum(tok, rd.base, rd.width)
			if !ok {
				f.state = 0
				continue
			}
			for k := range rd.width {
				if b := byte(x >> (8 * k)); !sqOut(b) {
					f.feed(b, i, j)
				}
			}
		}
		i = j
	}
}

// parseNum is tok ("-" and digits) as a word of width bytes in base: a
// negative number as its two's complement; false if tok is no such word.
func parseNum(tok string, base, width int) (uint64, bool) {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if tok == "" {
		return 0, false
	}
	x, err := strconv.ParseUint(tok, base, 64)
	if err != nil {
		return 0, false
	}
	bits := uint(8 * width)
	switch {
	case neg && (x == 0 || width < 8 && x > 1<<(bits-1)):
		return 0, false
	case neg:
		return -x, true
	case width < 8 && x >= 1<<bits:
		return 0, false
	}
	return x, true
}
