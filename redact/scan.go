package redact

import (
	"strings"
	"sync"
)

// scanAll finds the set's needles in a text, and where its gate words
// are (when gates): the gate words' pair filter (gatescan.go) and the
// set's views through their filters (filter.go), which run the automata
// only where a needle may be. scanFused is the same without the filters.
func scanAll(s string, m *matcher, gates bool) scanResult {
	if m == nil || m.noFilter || m.sqf == nil || m.hxf == nil {
		r := scanFused(s, m)
		if !gates {
			r.gates = nil
		}
		return r
	}
	var r scanResult
	if gates {
		r.gates = scanGates(s)
	}
	r.spans = m.sqf.scanSqueezed(s, r.spans)
	m.hxf.scanHex(s, &r)
	return r
}

// scanFused is one pass over a text: the gate words' automaton (gatescan.go)
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
// are and whether a line has a dump's layout.
type scanResult struct {
	spans []span
	gates *gateScan
	dump  bool
}

// fused is the gate words', the squeezed and the hex automata's tables as
// one: their rows one after the other in tab, each entry an offset in tab
// (with matchBit), read through one table of columns a byte. Fewer
// slices and tables in the loop keep its variables in registers.
type fused struct {
	tab []int32
	// cols are each byte's columns in the gate, squeezed and hex rows
	// (the fourth is padding); noHex leaves the hex automaton in its
	// state and hexOnly the other two, for a dump's lines.
	cols, noHex, hexOnly [256][4]int32
	// the automata's roots in tab
	qBase, hBase int32
	sq, hx       *automaton // nil when the set has no needle for it
}

// idle is an automaton of one state that finds nothing: it stands for one
// a set has no needle for.
var idle = &automaton{stride: extraCols, next: []int32{0, 0, matchBit}}

// newFused builds the tables of scanAll for sq and hx (either may be nil).
func newFused(sq, hx *automaton) *fused {
	g := &gateWords
	g.once.Do(compileGates)
	f := &fused{sq: sq, hx: hx}
	if sq == nil {
		sq = idle
	}
	if hx == nil {
		hx = idle
	}
	f.qBase = int32(len(g.next))
	f.hBase = f.qBase + int32(len(sq.next))
	f.tab = make([]int32, 0, int(f.hBase)+len(hx.next))
	f.tab = append(f.tab, g.next...)
	for _, part := range []struct {
		next []int32
		base int32
	}{{sq.next, f.qBase}, {hx.next, f.hBase}} {
		for _, t := range part.next {
			f.tab = append(f.tab, (t&^matchBit+part.base)|t&matchBit)
		}
	}
	stay := func(a *automaton) int32 { return a.nclass + stayCol }
	for c := range 256 {
		qc, hc := stay(sq), stay(hx)
		if f.sq != nil {
			qc = sq.sqCol[c]
		}
		if f.hx != nil {
			hc = hx.hexCol[c]
		}
		f.cols[c] = [4]int32{g.col[c], qc, hc}
		f.noHex[c] = [4]int32{g.col[c], qc, stay(hx)}
		f.hexOnly[c] = [4]int32{g.nc + stayCol, stay(sq), hc}
	}
	return f
}

// scanFused runs the gate words' automaton and m's (m may be nil) over s.
func scanFused(s string, m *matcher) scanResult {
	f := noSet()
	if m != nil {
		f = m.fusedTables()
	}
	r := scanResult{gates: newGateScan(s)}
	g, q, h := int32(0), f.qBase, f.hBase
	for at := 0; at < len(s); {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		hexFrom, hexTo := at, end
		if f.hx != nil {
			var isDump bool
			isDump, hexFrom, hexTo, _, _ = dumpLine(s, at, end)
			r.dump = r.dump || isDump
		}
		line := s[:end]
		if hexFrom == at && hexTo == end {
			for j := at; ; j++ {
				if j, g, q, h = run(f.tab, &f.cols, line, j, g, q, h); j == end {
					break
				}
				g, q, h = r.slow(f, &f.cols, s, j, at, at, end, g, q, h)
			}
		} else {
			// a dump's line: the hex view reads its hex columns only
			for j := at; ; j++ {
				if j, g, q, h = run(f.tab, &f.noHex, line, j, g, q, h); j == end {
					break
				}
				g, q, h = r.slow(f, &f.noHex, s, j, at, hexFrom, hexTo, g, q, h)
			}
			for j, hexLine := hexFrom, s[:hexTo]; ; j++ {
				if j, g, q, h = run(f.tab, &f.hexOnly, hexLine, j, g, q, h); j == hexTo {
					break
				}
				g, q, h = r.slow(f, &f.hexOnly, s, j, at, hexFrom, hexTo, g, q, h)
			}
		}
		g = 0 // '\n' is in no gate word; the views leave it out
		at = end + 1
	}
	return r
}

// noSet is scanFused's tables for the gate words alone, made at the
// first use.
var noSet = sync.OnceValue(func() *fused { return newFused(nil, nil) })

// fusedTables is m's tables for scanFused, made at the first use: the
// filters need none.
func (m *matcher) fusedTables() *fused {
	m.fusedOnce.Do(func() { m.fused = newFused(m.squeezed, m.hex) })
	return m.fused
}

// run reads s from j, the automata in states g, q, h, until one of them
// would reach a state with matchBit: it returns where (len(s) if none
// does) and their states before that byte. The loop of the pass: a
// function of its own, so that its variables stay in registers.
func run(tab []int32, cols *[256][4]int32, s string, j int, g, q, h int32) (int, int32, int32, int32) {
	for ; j < len(s); j++ {
		cc := &cols[s[j]]
		ng, nq, nh := tab[g+cc[0]], tab[q+cc[1]], tab[h+cc[2]]
		if ng|nq|nh < 0 {
			break
		}
		g, q, h = ng, nq, nh
	}
	return j, g, q, h
}

// slow reads byte j of s (on the line starting at ls, the hex view's part
// of it [hexFrom, hexTo)) where run stopped: from states g, q, h through
// cols, looking at each state with matchBit: a gate word, a needle of the
// squeezed or hex automaton ending, or the hex
// view's '0', 'x', 'X' or '\\' (hexFlag). It returns the states after it.
func (r *scanResult) slow(f *fused, cols *[256][4]int32, s string, j, ls, hexFrom, hexTo int, g, q, h int32) (int32, int32, int32) {
	c := s[j]
	cc := &cols[c]
	ng, nq, nh := f.tab[g+cc[0]], f.tab[q+cc[1]], f.tab[h+cc[2]]
	if ng < 0 {
		ng &^= matchBit
		r.gates.hit(j, ls, ng)
	}
	if nq < 0 {
		nq &^= matchBit
		r.spans = f.sq.matched(&f.sq.squeezedTr, s, j, nq-f.qBase, r.spans)
	}
	if nh < 0 {
		nh = r.hexFlag(f, s, j, hexFrom, hexTo, h, nh)
	}
	return ng, nq, nh
}

// hexFlag is slow's part for the hex automaton, which read byte j of the
// hex view's part [from, to) of a line from state h and reached nh, which
// has matchBit: a needle ends, or the byte is '0', '\\', 'x' or 'X'
// (flagCol), which this decides on: a prefix "0x", "0X" or "\\x" before a
// hex digit is left out, as views.go says; a '0' that starts none is
// fed, a '\\' that starts none breaks the run. It returns the state after
// the byte.
func (r *scanResult) hexFlag(f *fused, s string, j, from, to int, h, nh int32) int32 {
	hx := f.hx
	switch c := s[j]; c {
	case '0', '\\':
		if hexPrefix(s, j, to) {
			return h
		}
		if c == '\\' {
			return f.hBase
		}
		nh = f.tab[h+int32(hx.hexTr['0'])]
		if nh >= 0 {
			return nh
		}
	case 'x', 'X':
		if j > from && hexPrefix(s, j-1, to) {
			return h // a prefix's x
		}
		return f.hBase
	}
	nh &^= matchBit
	st := (nh - f.hBase) / hx.stride
	r.spans = append(r.spans, span{from: hexStart(s, j, int(hx.best[st])), to: j + 1, secret: int(hx.secret[st])})
	return nh
}

// hexPrefix reports whether s[j] ('0' or '\\') starts a prefix the hex
// view leaves out in a part of a line ending at to: "0x", "0X", "\\x",
// then a hex digit.
func hexPrefix(s string, j, to int) bool {
	return j+2 < to && (s[j+1] == 'x' || s[j] == '0' && s[j+1] == 'X') && (s[j] == '0' || s[j] == '\\') && isHex(s[j+2])
}

// hexStart is where the last l bytes the hex view fed, up to byte j, start
// in s: it walks back over the hex view's parts of j's line and of the
// lines before (a dump's hex columns; a whole line otherwise).
func hexStart(s string, j, l int) int {
	ls := strings.LastIndexByte(s[:j], '\n') + 1
	le := strings.IndexByte(s[j:], '\n')
	if le < 0 {
		le = len(s)
	} else {
		le += j
	}
	_, from, to, _, _ := dumpLine(s, ls, le)
	for k := j; ; k-- {
		if k < from {
			if ls == 0 {
				return from // not reached: the automaton fed l bytes
			}
			le = ls - 1
			ls = strings.LastIndexByte(s[:le], '\n') + 1
			_, from, to, _, _ = dumpLine(s, ls, le)
			k = to
			continue
		}
		if hexFed(s, k, to) {
			if l--; l == 0 {
				return k
			}
		}
	}
}

// hexFed reports whether the hex view feeds byte k of a part of a line
// ending at to: a hex digit, but a '0' that starts a prefix.
func hexFed(s string, k, to int) bool {
	return isHex(s[k]) && !(s[k] == '0' && hexPrefix(s, k, to))
}
