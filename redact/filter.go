package redact

import (
	"math/bits"
	"strings"
)

// The set's automata read only the parts of a text where a needle may be:
// a q-gram filter looks at the text every step bytes and runs an
// automaton only around a sample that may be in a needle.
//
// A needle of a view is at least minLen bytes of that view (the bytes the
// view feeds its automaton: the squeezed view's are the bytes that are
// not white space; the hex view's the hex digits of a line's hex part
// but a prefix's "0x"). With step = minLen - gramLen + 1, each
// occurrence of a needle has a sample position p (a multiple of step in
// the raw text) with fewer than step of its fed bytes before p: the
// gramLen bytes the view feeds from p on are the needle's bytes at an
// offset below step. The filter holds those grams of every needle (a
// bitmap: hashed for the squeezed view, the four hex digits as they are
// for the hex view); a sample whose gram it does not hold is in no
// needle. Where one is, the automaton runs from root at the byte
// (step-1) fed bytes before p (no needle through p can start before it)
// until no needle starting at or before p is still open: its state has
// read no byte at or before p (depth). A run goes on where the next
// sample's would start before it ends, so each byte is read at most once
// and in each state the full scan would have at the bytes where a needle
// ends: the spans are those of the unfiltered scan (scanFused), which
// FuzzFilterSameAsFull and the reference scans check.

// gramLen is the filter's gram: bytes (squeezed view) or hex digits.
const gramLen = 4

// viewFilter is a view's filter over its automaton.
type viewFilter struct {
	a    *automaton
	step int
	// grams is the bitmap of the needles' grams at offsets below step;
	// shift takes a gram's hash to its bit (squeezed view).
	grams []uint64
	shift uint32
	// small is grams folded to 256 bits a distinct gram (squeezed view):
	// a gram's bit in it is its bit in grams shifted right by fold.
	small []uint64
	fold  uint32
}

// viewRun is where the last run of a view's automaton stopped: the next
// byte it would read and its state there.
type viewRun struct {
	front int
	state int32
}

// newSqFilter is the squeezed view's filter for a's needles.
func newSqFilter(a *automaton, needles []string) *viewFilter {
	if a == nil || a.minLen < gramLen {
		return nil
	}
	f := &viewFilter{a: a, step: a.minLen - gramLen + 1}
	n := len(needles) * f.step
	size := 1 << 16
	for size < 32*n && size < 1<<22 {
		size <<= 1
	}
	f.grams = make([]uint64, size/64)
	f.shift = uint32(32 - bits.TrailingZeros(uint(size)))
	ones := 0
	for _, nd := range needles {
		for off := 0; off < f.step; off++ {
			h := gramHash(nd[off:off+gramLen], f.shift)
			if f.grams[h>>6]&(1<<(h&63)) == 0 {
				f.grams[h>>6] |= 1 << (h & 63)
				ones++
			}
		}
	}
	f.folded(ones)
	return f
}

// minGramBits is the smallest squeezed filter's bitmap; smallBits the
// folded bitmap's bits a distinct gram (32: 0.09 ms a step more in the
// squeezed filter's samples, its whole bitmap read eight times as
// often).
const (
	minGramBits = 1 << 12
	smallBits   = 256
)

// folded fills small: grams as small as its grams allow at
// smallBits a distinct gram (ones are set), which the cache holds
// better (the needles of a set's values often share their grams: values
// alike, a value's shapes). A sample reads small first, and grams only
// where small holds its gram (one time in smallBits by chance, each a
// cache miss): a step's output comes in 32 KiB pieces between which the
// bitmaps leave the cache. A gram's bit in a bitmap half as large is its
// bit in this one shifted right by one (gramHash).
func (f *viewFilter) folded(ones int) {
	size := len(f.grams) * 64
	d := 0
	for size>>(d+1) >= max(smallBits*ones, minGramBits) {
		d++
	}
	f.small, f.fold = f.grams, uint32(d)
	if d == 0 {
		return
	}
	f.small = make([]uint64, size>>d/64)
	for i, w := range f.grams {
		for ; w != 0; w &= w - 1 {
			h := (i*64 + bits.TrailingZeros64(w)) >> d
			f.small[h>>6] |= 1 << (h & 63)
		}
	}
}

// gramHash is the bit of gram g (gramLen bytes) in a bitmap of 1<<(32-shift) bits.
func gramHash(g string, shift uint32) uint32 {
	x := uint32(g[0]) | uint32(g[1])<<8 | uint32(g[2])<<16 | uint32(g[3])<<24
	return ((x | caseFold) * 0x9E3779B1) >> shift
}

// caseFold is ORed into a squeezed gram before it is hashed: an ASCII
// letter's two cases are one (the squeezed automaton reads letters
// without their case: automaton.foldCase), and some other bytes too,
// which only makes the filter let a few more samples through.
const caseFold = 0x20202020

// newHexFilter is the hex view's filter for a's needles (hex digits in
// lower case).
func newHexFilter(a *automaton, needles []string) *viewFilter {
	if a == nil || a.minLen < gramLen {
		return nil
	}
	f := &viewFilter{a: a, step: a.minLen - gramLen + 1, grams: make([]uint64, 1<<16/64)}
	for _, nd := range needles {
		for off := 0; off < f.step; off++ {
			x := uint32(0)
			for i := range gramLen {
				d, _ := unhex(nd[off+i])
				x = x<<4 | uint32(d)
			}
			f.grams[x>>6] |= 1 << (x & 63)
		}
	}
	return f
}

// scanSqueezed finds the squeezed view's needles in s.
func (f *viewFilter) scanSqueezed(s string, spans []span) []span {
	var v viewRun
	shift, grams, small, fold := f.shift, f.grams, f.small, f.fold
	for p := 0; p+gramLen <= len(s); p += f.step {
		x := uint32(s[p]) | uint32(s[p+1])<<8 | uint32(s[p+2])<<16 | uint32(s[p+3])<<24
		if (x-0x21212121)&^x&0x80808080 != 0 {
			// a byte below '!' (white space, maybe): the gram is the next
			// four bytes that are not
			var ok bool
			if x, ok = squeezedGram(s, p); !ok {
				break // fewer are left
			}
		}
		h := ((x | caseFold) * 0x9E3779B1) >> shift
		if hs := h >> fold; small[hs>>6]&(1<<(hs&63)) != 0 && grams[h>>6]&(1<<(h&63)) != 0 {
			spans = f.runSqueezed(s, p, &v, spans)
		}
	}
	return spans
}

// squeezedGram is the first gramLen bytes of s from p on that are not
// white space, as scanSqueezed reads them (false: fewer are left).
func squeezedGram(s string, p int) (uint32, bool) {
	x, k := uint32(0), 0
	for j := p; j < len(s) && k < gramLen; j++ {
		if !sqOut(s[j]) {
			x |= uint32(s[j]) << (8 * k)
			k++
		}
	}
	return x, k == gramLen
}

// runSqueezed runs the squeezed automaton for a sample at p that may be
// in a needle: from root at the (step-1)th byte not white space before p,
// or from where the last run stopped if that is later, until no needle
// starting at or before p is open.
func (f *viewFilter) runSqueezed(s string, p int, v *viewRun, spans []span) []span {
	a := f.a
	w, n := p, f.step-1
	for n > 0 && w > 0 {
		if w--; !sqOut(s[w]) {
			n--
		}
	}
	j, st := v.front, v.state
	if w > j {
		j, st = w, 0
	}
	stay := a.nclass + stayCol
	after := int32(0) // bytes fed after p
	for ; j < len(s); j++ {
		col := a.sqCol[s[j]]
		if col == stay {
			continue
		}
		nst := a.next[st+col]
		if nst < 0 {
			nst &^= matchBit
			spans = a.matched(&a.squeezedTr, s, j, nst, spans)
		}
		st = nst
		if j > p {
			after++
		}
		if j >= p && a.depth[st/a.stride] <= after {
			j++
			break
		}
	}
	v.front, v.state = j, st
	return spans
}

// Bytes as the hex filter reads them: a hex digit's value, or one of
// these.
const (
	nibSkip  = 16 + iota // a separator the view leaves out
	nibBreak             // no needle goes through it
	nibAsk               // 'x', 'X', '\\': a prefix's, maybe
)

var hexNib = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		switch d, ok := unhex(b); {
		case ok:
			t[c] = d
		case hexSep(b):
			t[c] = nibSkip
		case b == 'x' || b == 'X' || b == '\\':
			t[c] = nibAsk
		default:
			t[c] = nibBreak
		}
	}
	return t
}()

// hexBreak is 1 for a byte that is nibBreak in hexNib.
var hexBreak = func() (t [256]uint8) {
	for c := range t {
		if hexNib[c] == nibBreak {
			t[c] = 1
		}
	}
	return t
}()

// scanHex finds the hex view's needles in s, and whether a line has a
// dump's layout (r.dump): line by line, a dump's hex part alone.
func (f *viewFilter) scanHex(s string, r *scanResult) {
	var v viewRun
	p := 0
	if !hasByte(s, ' ', r.gates) && !hasByte(s, ':', r.gates) {
		// No line has a dump's layout (an offset column ends at ':' or ' '):
		// each line's hex part is the line, and the view reads the text as
		// one line with its newlines left out (hexPrefix looks at no '\n').
		// But a line of numbers alone (`od -An -tu1 -w1 | tr -d ' '`,
		// "[104,117,…]") is a dump's line for the numeric view, as
		// dumpLine says on the other path.
		r.dump = r.dump || numericLines(s)
		for ; p < len(s); p += f.step {
			if p+gramLen <= len(s) && hexBreak[s[p]]|hexBreak[s[p+1]]|hexBreak[s[p+2]]|hexBreak[s[p+3]] != 0 {
				// a byte that breaks the view's runs among the sample's
				// first four: fewer than four digits are fed before it
				continue
			}
			if hexNib[s[p]] != nibBreak && f.hexMay(s, p, len(s), 0, len(s)) {
				r.spans = f.runHex(s, p, &v, r.spans)
			}
		}
		return
	}
	for at := 0; at < len(s); {
		end := lineEnd(s, at)
		isDump, from, to, _, _ := dumpLine(s, at, end)
		r.dump = r.dump || isDump
		for ; p <= end && p < len(s); p += f.step {
			if f.hexMay(s, p, end, from, to) {
				r.spans = f.runHex(s, p, &v, r.spans)
			}
		}
		at = end + 1
	}
}

// hasByte reports whether s holds c, looking from where sc (s's gate
// scan, or nil) says c may first be.
func hasByte(s string, c byte, sc *gateScan) bool {
	return strings.IndexByte(s[sc.watchFrom(s, c):], c) >= 0
}

// lineEnd is where the line holding s[at] ends: its newline, or len(s).
func lineEnd(s string, at int) int {
	if end := strings.IndexByte(s[at:], '\n'); end >= 0 {
		return at + end
	}
	return len(s)
}

// hexLines is how many lines after a sample's the hex filter reads for
// its gram; a gram reaching further may be in a needle.
const hexLines = 2

// hexMay reports whether the sample at p, on a line ending at end whose
// hex part is [from, to), may be in a needle: the gram the hex view feeds
// from p on is in the filter (read as runHex reads it: prefixes left
// out, over the hex parts of the next lines), or it goes on further than
// hexLines lines.
func (f *viewFilter) hexMay(s string, p, end, from, to int) bool {
	x, k := uint32(0), 0
	for line := 0; ; line++ {
		for j := max(p, from); j < to; j++ {
			c := s[j]
			switch d := hexNib[c]; {
			case d < 16:
				if c == '0' && hexPrefix(s, j, to) {
					continue
				}
				x = x<<4 | uint32(d)
				if k++; k == gramLen {
					return f.grams[x>>6]&(1<<(x&63)) != 0
				}
			case d == nibSkip:
			case d == nibBreak:
				return false
			case c == '\\':
				if !hexPrefix(s, j, to) {
					return false
				}
			default: // 'x', 'X'
				if !(j > from && hexPrefix(s, j-1, to)) {
					return false
				}
			}
		}
		if end >= len(s) {
			return false // the text ends first
		}
		if line == hexLines {
			return true
		}
		at := end + 1
		end = lineEnd(s, at)
		_, from, to, _, _ = dumpLine(s, at, end)
		p = from
	}
}

// hexBack is where a needle of the hex view holding a byte at p with
// fewer than n+1 of its bytes before p may start: the n-th byte the view
// feeds before p, or after the last byte before p that breaks the view's
// runs (0 when there is none).
func hexBack(s string, p, n int) int {
	if n <= 0 {
		return p
	}
	ls := strings.LastIndexByte(s[:p], '\n') + 1
	end := lineEnd(s, p)
	for {
		_, from, to, _, _ := dumpLine(s, ls, end)
		for k := min(p, to) - 1; k >= from; k-- {
			switch c := s[k]; {
			case hexFed(s, k, to):
				if n--; n == 0 {
					return k
				}
			case hexNib[c] == nibBreak:
				return k + 1
			case c == 'x' || c == 'X':
				if !(k > from && hexPrefix(s, k-1, to)) {
					return k + 1
				}
			case c == '\\':
				if !hexPrefix(s, k, to) {
					return k + 1
				}
			}
		}
		if ls == 0 {
			return 0
		}
		end = ls - 1
		ls = strings.LastIndexByte(s[:end], '\n') + 1
		p = end
	}
}

// runHex is runSqueezed for the hex view: line by line, each line's hex
// part, with its prefixes left out as scanFused's hexFlag does.
func (f *viewFilter) runHex(s string, p int, v *viewRun, spans []span) []span {
	a := f.a
	w := hexBack(s, p, f.step-1)
	j, h := v.front, v.state
	if w > j {
		j, h = w, 0
	}
	after := int32(0)
	for j < len(s) {
		ls := strings.LastIndexByte(s[:j], '\n') + 1
		end := lineEnd(s, j)
		_, from, to, _, _ := dumpLine(s, ls, end)
		for j = max(j, from); j < to; j++ {
			c := s[j]
			col := a.hexCol[c]
			switch {
			case col < a.nclass:
			case col == a.nclass+stayCol:
				continue
			case col == a.nclass+rootCol:
				h = 0
				col = -1
			case c == '0':
				if hexPrefix(s, j, to) {
					continue
				}
				col = int32(a.hexTr['0'])
			case c == '\\':
				if hexPrefix(s, j, to) {
					continue
				}
				h, col = 0, -1
			default: // 'x', 'X'
				if j > from && hexPrefix(s, j-1, to) {
					continue
				}
				h, col = 0, -1
			}
			if col >= 0 {
				nh := a.next[h+col]
				if nh < 0 {
					nh &^= matchBit
					st := nh / a.stride
					spans = append(spans, span{from: hexStart(s, j, int(a.best[st])), to: j + 1, secret: int(a.secret[st])})
				}
				h = nh
				if j > p {
					after++
				}
			}
			if j >= p && a.depth[h/a.stride] <= after {
				v.front, v.state = j+1, h
				return spans
			}
		}
		j = end + 1
	}
	v.front, v.state = len(s), h
	return spans
}
