package redact

import "strings"

// A view is the text as one family of shapes sees it, fed byte by byte
// to that family's automaton without being copied: the squeezed view
// leaves out white space (a value folded or split over lines) and NUL
// (UTF-16), and reads letters without their case (a value in upper case);
// the decoded view also decodes %XX and quoted-printable =XX, drops soft line
// breaks and reads dumps (od -c's spaced characters; a '*' line, od's
// and hexdump's for repeated lines, is a dump's line with nothing in it);
// the hex view keeps hex digits in lower case and leaves out separators
// (spaces, ':', '-', ',', '.', '_', "\x", "0x"). The base64 and base32 shapes
// are looked for in the squeezed view (shapes.go). In the decoded and hex views, a dump's offset
// column is left out, and of xxd's and hexdump -C's lines the decoded
// view takes the character column only and the hex view the hex columns
// only, so that a value dumped across lines is one run in each.
//
// The squeezed and hex views are read in one pass with the gate words
// (scanAll, scan.go); the decoded view in a pass of its own, on a text
// with an escape or a dump's line only. Where a needle ends, a walk back
// or a ring of the raw offsets of the last bytes fed says where it began.

// span is a part of the text to replace: bytes [from, to), a secret of
// the set (its index).
type span struct{ from, to, secret int }

// feeder runs an automaton over a view, recording matches as spans of the
// raw text.
type feeder struct {
	a     *automaton
	state int32   // its offset in the automaton's next
	n     int     // bytes fed
	ring  []int32 // raw offset of fed byte i at ring[i&mask]
	mask  int
	spans []span
}

func newFeeder(a *automaton, spans []span) *feeder {
	size := 1
	for size < a.maxLen+1 {
		size <<= 1
	}
	return &feeder{a: a, ring: make([]int32, size), mask: size - 1, spans: spans}
}

// feed gives the automaton byte c, which comes from raw bytes [from, to).
func (f *feeder) feed(c byte, from, to int) {
	a := f.a
	off := a.next[f.state+int32(a.class[c])]
	f.ring[f.n&f.mask] = int32(from)
	f.n++
	if off < 0 {
		off &^= matchBit
		st := off / a.stride
		f.spans = append(f.spans, span{from: int(f.ring[(f.n-int(a.best[st]))&f.mask]), to: to, secret: int(a.secret[st])})
	}
	f.state = off
}

// hexSep reports whether the hex view leaves c out between digits:
// white space, ':', '-', ',', '.' and '_' (`sed 's/../&_/g'`).
func hexSep(c byte) bool {
	return isSpace(c) || c == ':' || c == '-' || c == ',' || c == '.' || c == '_'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// sqOut reports whether the squeezed and decoded views leave c out: white
// space, and NUL, which is between the bytes of ASCII text in UTF-16
// (iconv -t UTF-16LE, a Windows file).
func sqOut(c byte) bool { return isSpace(c) || c == 0 }

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func isHex(c byte) bool { _, ok := unhex(c); return ok }

// dumpLine looks at the line s[at:end] for a dump's layout: an offset
// column (6 to 16 hex digits at the line's start, then ':' or a space;
// then a body; starting with 0 or od's seven octal digits but before a
// ':').
// It returns where the line's body starts (at when it has no offset
// column), and the body's parts: chars is the character column (xxd's
// after two spaces, hexdump -C's between '|'; the whole body for od -c),
// hex the hex columns. A line of numbers alone (od -An -b, Python's
// list of bytes: numericLine) is a dump's line with no offset column.
func dumpLine(s string, at, end int) (isDump bool, hexFrom, hexTo, charFrom, charTo int) {
	isDump, hexFrom, hexTo, charFrom, charTo = dumpLayout(s, at, end)
	if !isDump && at < end && numStart[s[at]] && numericLine(s, at, end) {
		return true, at, end, at, end
	}
	return isDump, hexFrom, hexTo, charFrom, charTo
}

// dumpLayout is dumpLine but for lines of numbers alone.
func dumpLayout(s string, at, end int) (isDump bool, hexFrom, hexTo, charFrom, charTo int) {
	if end-at == 1 && s[at] == '*' {
		// od's and hexdump's line for lines the same as the one before it
		// (without -v): a dump's line with nothing in it, so that the
		// lines before and after it are one run in the views, as the
		// repeated lines' last and the line after it are in the data
		return true, end, end, end, end
	}
	i := at
	for i < end && i-at < 17 && isHex(s[i]) {
		i++
	}
	if n := i - at; n < 6 || n > 16 || i >= end || (s[i] != ':' && s[i] != ' ') {
		return false, at, end, at, end
	}
	body := i + 1
	// An offset has a body after it, and but for xxd's (':') it starts
	// with 0 or is od's seven octal digits: a line of hex in groups
	// ("446f7445 6e76512d", xxd -p -c 4 | paste) or the padded last line
	// of hexdump -e '16/1 "%02x" "\n"' ("34270a     ") is no dump's, and
	// its first digits are the hex view's.
	if strings.TrimLeft(s[body:end], " ") == "" || s[i] == ' ' && s[at] != '0' && !(i-at == 7 && octal(s[at:i])) {
		return false, at, end, at, end
	}
	if s[i] == ':' { // xxd: the hex groups, then two spaces, then the characters
		j := body
		for j < end && s[j] == ' ' {
			j++
		}
		for j+1 < end && !(s[j] == ' ' && s[j+1] == ' ') {
			j++
		}
		if j+1 < end && hexColumns(s, body, j) {
			// the last two spaces after hex only: xxd -e pads its last
			// line's words inside the hex part ("3334353d     0a32  8~q")
			for k := j + 1; k+1 < end && (isHex(s[k+1]) || s[k+1] == ' '); k++ {
				if s[k] == ' ' && s[k+1] == ' ' {
					j = k
				}
			}
			return true, body, j, j + 2, end
		}
		if hexColumns(s, body, end) {
			return true, body, end, end, end
		}
		return false, at, end, at, end
	}
	// hexdump -C: "  |chars|"; od -t x1z: "  >chars<", at the line's end
	for j := body + 2; j < end-1; j++ {
		if c := s[j]; (c == '|' || c == '>') && s[j-1] == ' ' && s[j-2] == ' ' {
			closer := byte('|')
			if c == '>' {
				closer = '<'
			}
			if s[end-1] == closer && hexColumns(s, body, j) {
				return true, body, j, j + 1, end - 1
			}
		}
	}
	return true, body, end, body, end // od: the body is both
}

func octal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// lines calls f for each line of s (without its newline).
func lines(s string, f func(at, end int)) {
	for at := 0; at < len(s); {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		f(at, end)
		at = end + 1
	}
}

// skipByte and breakByte in a view's table (squeezedTr, hexTr): a byte
// the view leaves out, and one no shape goes through.
const (
	skipByte  = -1
	breakByte = -2
	// prefixByte (in hexTr): '\\', which starts a "\x" the hex view
	// leaves out, and otherwise breaks a run.
	prefixByte = -3
)

// scanDecoded runs a over the text without its white space, with URL and
// quoted-printable escapes decoded and a dump's lines reduced to their
// character column; and over the bytes a dump's numbers stand for
// (numFeeders). dump says whether s has a dump's line (scanAll).
func scanDecoded(a *automaton, s string, dump bool, sc *gateScan, spans []span) []span {
	if !dump && !escaped(s, sc) {
		return spans // the squeezed view is the same
	}
	f := newFeeder(a, spans)
	var nums *numFeeders
	lines(s, func(at, end int) {
		_, _, _, from, to := dumpLine(s, at, end)
		switch {
		case from < to && numericLine(s, from, to):
			if nums == nil {
				nums = newNumFeeders(a)
			}
			nums.line(s, from, to)
		case from < to && nums != nil:
			nums.reset()
		}
		for j := from; j < to; j++ {
			c := s[j]
			switch {
			case sqOut(c):
				continue
			case (c == '%' || c == '=') && j+2 < to:
				if h, ok := unhex(s[j+1]); ok {
					if l, ok := unhex(s[j+2]); ok {
						if d := h<<4 | l; !sqOut(d) {
							f.feed(d, j, j+3)
						}
						j += 2
						continue
					}
				}
			case c == '=' && (j+1 == to || j+2 == to && s[j+1] == '\r'):
				continue // a quoted-printable soft line break
			}
			f.feed(c, j, j+1)
		}
	})
	if nums != nil {
		for _, n := range nums.f {
			f.spans = append(f.spans, n.spans...)
		}
	}
	return f.spans
}

// tables fills the views' tables: the squeezed view's (white space left
// out) and the hex view's.
func (a *automaton) tables() {
	for c := range 256 {
		b := byte(c)
		a.squeezedTr[c] = int16(a.class[b])
		if sqOut(b) {
			a.squeezedTr[c] = skipByte
		}
		a.sqCol[c] = a.col(a.squeezedTr[c])
		switch {
		case b >= 'A' && b <= 'F':
			a.hexTr[c] = int16(a.class[b+'a'-'A'])
		case isHex(b):
			a.hexTr[c] = int16(a.class[b])
		case hexSep(b):
			a.hexTr[c] = skipByte
		case b == '\\':
			a.hexTr[c] = prefixByte
		default:
			a.hexTr[c] = breakByte
		}
		a.hexCol[c] = a.col(a.hexTr[c])
		if a.hexTr[c] >= 0 {
			a.fed[c] = 1
		}
		if b == '0' || b == 'x' || b == 'X' {
			// "0x", "0X" and "\x" are looked at apart (scan.go)
			a.hexCol[c], a.fed[c] = a.nclass+flagCol, 0
		}
	}
}

// col is a view table's entry as a column of next.
func (a *automaton) col(x int16) int32 {
	switch x {
	case skipByte:
		return a.nclass + stayCol
	case breakByte:
		return a.nclass + rootCol
	case prefixByte:
		return a.nclass + flagCol
	}
	return int32(x)
}

// hexColumns reports whether s[from:to] is hex digits and spaces only, as
// a dump's hex columns are.
func hexColumns(s string, from, to int) bool {
	for i := from; i < to; i++ {
		if !isHex(s[i]) && s[i] != ' ' {
			return false
		}
	}
	return true
}

// escaped reports whether s has a %XX or =XX escape or a
// quoted-printable soft break: with a dump's line (which scanAll
// reports), what makes the decoded view of s differ from the squeezed
// one. sc is s's gate scan (or nil): where '%' and '=' may first be.
func escaped(s string, sc *gateScan) bool {
	for _, e := range []byte{'%', '='} {
		for i := sc.watchFrom(s, e); i < len(s); i++ {
			j := strings.IndexByte(s[i:], e)
			if j < 0 {
				break
			}
			i += j
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) || e == '=' && (i+1 == len(s) || s[i+1] == '\n' || s[i+1] == '\r') {
				return true
			}
		}
	}
	return false
}
