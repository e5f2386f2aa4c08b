package redact

import "strings"

// scanAll is one pass over a text: the gate words' automaton (gatescan.go)
// and the set's squeezed (which holds the base64 shapes too) and hex
// automata, each byte read once
// and fed to each through its view's column table (a byte a view leaves
// out stays in its state, one that breaks a run goes to the root, in the
// table: no branch a byte). The loop waits only where an automaton's
// table says so (matchBit): a needle or gate word ends, a byte is not
// ASCII, or a '0' or '\' may start a hex prefix ("0x", "\x") the hex
// view leaves out. The decoded view (views.go) is a second pass, run only
// on a text that has an escape or a dump's line.

// scanResult is what scanAll found: the set's spans, where the gate words
// are (nil unless asked for) and whether a line has a dump's layout.
type scanResult struct {
	spans []span
	gates *gateScan
	dump  bool
}

// idle is an automaton that finds nothing and stays in its root state:
// it stands for one a scan does not run.
var idle = func() *automaton {
	a := &automaton{stride: extraCols, next: make([]int32, extraCols)}
	for c := range 256 {
		a.sqCol[c], a.hexCol[c] = stayCol, stayCol
	}
	return a
}()

// idleGates is the gate automaton's part of scanAll when it is not asked
// for: a table of one state that stays there.
var idleGates = struct {
	next []int32
	col  [256]int32
}{next: []int32{0}}

// scanAll runs m's automata (m may be nil) and, when gates, the gate
// words' over s.
func scanAll(s string, m *matcher, gates bool) scanResult {
	var r scanResult
	sq, hx := idle, idle
	if m != nil {
		if m.squeezed != nil {
			sq = m.squeezed
		}
		if m.hex != nil {
			hx = m.hex
		}
	}
	gnext, gcol := idleGates.next, &idleGates.col
	if gates {
		r.gates = newGateScan(s)
		gnext, gcol = gateWords.next, &gateWords.col
	}
	// the hex view's ring: the raw offset of its fed byte n at ring[n&mask]
	size := 1
	for size < hx.maxLen+1 {
		size <<= 1
	}
	var small [64]int32
	ring := small[:]
	if size > len(small) {
		ring = make([]int32, size)
	}
	mask := len(ring) - 1
	n := 0 // bytes the hex view fed
	qnext, hnext := sq.next, hx.next
	qcol, hcol, fed := &sq.sqCol, &hx.hexCol, &hx.fed
	var g, q, h int32
	for at := 0; at < len(s); {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		hexFrom, hexTo := at, end
		if hx != idle {
			var isDump bool
			isDump, hexFrom, hexTo, _, _ = dumpLine(s, at, end)
			r.dump = r.dump || isDump
		}
		if hexFrom == at && hexTo == end {
			for j := at; j < end; j++ {
				c := s[j]
				ng, nq, nh := gnext[g+gcol[c]], qnext[q+qcol[c]], hnext[h+hcol[c]]
				ring[n&mask] = int32(j)
				n += int(fed[c])
				if ng|nq|nh < 0 {
					if ng|nq < 0 {
						ng, nq = r.slow(s, j, at, c, ng, nq, sq)
					}
					if nh < 0 {
						nh, n = r.hexSlow(s, j, c, h, nh, hx, ring, n, at, end)
					}
				}
				g, q, h = ng, nq, nh
			}
		} else {
			// a dump's line: the hex view reads its hex columns only, in a
			// pass of its own
			for j := at; j < end; j++ {
				c := s[j]
				ng, nq := gnext[g+gcol[c]], qnext[q+qcol[c]]
				if ng|nq < 0 {
					ng, nq = r.slow(s, j, at, c, ng, nq, sq)
				}
				g, q = ng, nq
			}
			for j := hexFrom; j < hexTo; j++ {
				c := s[j]
				nh := hnext[h+hcol[c]]
				ring[n&mask] = int32(j)
				n += int(fed[c])
				if nh < 0 {
					nh, n = r.hexSlow(s, j, c, h, nh, hx, ring, n, hexFrom, hexTo)
				}
				h = nh
			}
		}
		g = 0 // '\n' is in no gate word; the views leave it out
		at = end + 1
	}
	return r
}

// slow is scanAll's work where the gate or the squeezed automaton
// reached a state with matchBit, reading byte j (c) of the line starting
// at ls: each of g, q that is negative is looked at, and returned as its
// state's offset.
func (r *scanResult) slow(s string, j, ls int, c byte, g, q int32, sq *automaton) (int32, int32) {
	if g < 0 {
		g &^= matchBit
		r.gates.hit(j, ls, c, g)
	}
	if q < 0 {
		q &^= matchBit
		r.spans = sq.matched(&sq.squeezedTr, s, j, q, r.spans)
	}
	return g, q
}

// hexSlow is scanAll's work where the hex automaton, in state h, read
// byte j (c) of the hex view's part [from, to) of a line and reached nh,
// which has matchBit: a needle ends, or c is '0', '\' (flagCol) or 'x'
// (flagCol), which this decides on: a prefix "0x", "0X" or "\x" before a
// hex digit is left out, as views.go says; a '0' that starts none is
// fed, a '\' that starts none breaks the run. ring and n are the hex
// view's ring of raw offsets (fed byte n at ring[n&(len(ring)-1)]) and
// how many bytes it fed. It returns the state the automaton is in after
// c, and n.
func (r *scanResult) hexSlow(s string, j int, c byte, h, nh int32, hx *automaton, ring []int32, n, from, to int) (int32, int) {
	switch c {
	case '0', '\\':
		if j+2 < to && (s[j+1] == 'x' || c == '0' && s[j+1] == 'X') && isHex(s[j+2]) {
			return h, n
		}
		if c == '\\' {
			return 0, n
		}
		nh = hx.next[h+int32(hx.hexTr['0'])]
		n++ // the ring holds j already
		if nh >= 0 {
			return nh, n
		}
	case 'x', 'X':
		if j > from && j+1 < to && (s[j-1] == '0' || c == 'x' && s[j-1] == '\\') && isHex(s[j+1]) {
			return h, n // a prefix's x
		}
		return 0, n
	}
	nh &^= matchBit
	st := nh / hx.stride
	r.spans = append(r.spans, span{from: int(ring[(n-int(hx.best[st]))&(len(ring)-1)]), to: j + 1, secret: int(hx.secret[st])})
	return nh, n
}
