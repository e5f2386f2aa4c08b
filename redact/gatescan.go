package redact

import (
	"slices"
	"strings"
	"sync"
)

// The patterns' gate words are looked for in one pass over the text, all
// at once: an Aho-Corasick automaton over the words, with A-Z read as
// a-z (a word gated in any case matches so; one gated as written is
// checked against the text where it ends). Looking for each word with
// strings.Index cost more than the patterns on an output holding few of
// them (base64, in which the first letters of "key", "pass" or "api"
// are everywhere).

// gateWord is a word a gate needs: in any case (fold) or as written.
type gateWord struct {
	w    string
	fold bool
}

// gateWords holds every gate's words; their automaton is compiled at the
// first scan.
var gateWords struct {
	once  sync.Once
	ids   map[gateWord]int
	list  []gateWord
	class [256]uint8
	nc    int32
	delta []int32
	out   [][]int32 // word ids ending in each state, through its failure chain
	// next is delta with each state as its offset (state*stride), matchBit
	// set where a word ends: the scan's table, with automaton's extra
	// columns.
	next   []int32
	stride int32
	// col is each byte's column in next: its class.
	col [256]int32
	// fold[id] says word id is one of foldRunes.
	fold []bool
}

// foldRunes are the runes that (?i) folds to an ASCII letter: ſ to s, the
// Kelvin sign to k (unicode.SimpleFold; no other). A line holding one
// may spell a gate word the scan does not see (paſſword): it passes every
// gate.
var foldRunes = []string{"\u017f", "\u212a"}

// registeredGates are the words redactGated uses: gateScan knows only
// those.
func registeredGates() []gateWord {
	var ws []gateWord
	add := func(fold bool, words ...string) {
		for _, w := range words {
			ws = append(ws, gateWord{w, fold})
		}
	}
	add(true, assignWords...)
	add(true, "_key", "-key", ".key", "aws_", "pass", "_pwd", "-pwd", ".pwd", "bearer", "machine", "default")
	add(false, keyShapeWords...)
	add(false, "-----BEGIN", "://", "?", "&", "-p", "mysql", "mariadb", "sshpass", "curl", "htpasswd")
	add(false, foldRunes...)
	return ws
}

func compileGates() {
	g := &gateWords
	g.ids = map[gateWord]int{}
	lower := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	g.nc = 1
	for _, w := range registeredGates() {
		if _, ok := g.ids[w]; ok {
			continue
		}
		g.ids[w] = len(g.list)
		g.list = append(g.list, w)
		for i := 0; i < len(w.w); i++ {
			if c := lower(w.w[i]); g.class[c] == 0 {
				g.class[c] = uint8(g.nc)
				g.nc++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		g.class[c] = g.class[c+'a'-'A']
	}
	nc := g.nc
	newState := func() int32 {
		s := int32(len(g.out))
		for range nc {
			g.delta = append(g.delta, 0) // no edge (fillFailures)
		}
		g.out = append(g.out, nil)
		return s
	}
	newState()
	for id, w := range g.list {
		s := int32(0)
		for i := 0; i < len(w.w); i++ {
			c := int32(g.class[w.w[i]])
			if g.delta[s*nc+c] == 0 {
				g.delta[s*nc+c] = newState()
			}
			s = g.delta[s*nc+c]
		}
		g.out[s] = append(g.out[s], int32(id))
	}
	fillFailures(g.delta, nc, len(g.out), func(s, f int32) {
		g.out[s] = append(g.out[s], g.out[f]...) // the root's is empty
	})
	g.stride = nc + extraCols
	match := make([]bool, len(g.out))
	for t, o := range g.out {
		match[t] = len(o) > 0
	}
	g.next = nextTable(g.delta, nc, extraCols, match, func(row []int32, off int32) {
		row[stayCol], row[rootCol] = off, 0
		row[flagCol] = matchBit
	})
	g.delta = nil
	for c := range 256 {
		g.col[c] = int32(g.class[c])
	}
	for _, w := range g.list {
		g.fold = append(g.fold, !w.fold && slices.Contains(foldRunes, w.w))
	}
}

// gateScan is where a text holds each gate word: the starts of the lines
// holding it (ascending, each once), and of the lines holding one of
// foldRunes.
type gateScan struct {
	src    string
	lines  [][]int // by word id
	folded []int
}

// scanGates finds every gate word of s in one pass: one table lookup a
// byte, the line a word is on looked for only where one ends (scanAll
// does the same alongside the set's automata).
func scanGates(s string) *gateScan {
	sc := newGateScan(s)
	g := &gateWords
	off := int32(0)
	ls, seen := 0, 0 // ls starts the line holding s[seen]
	for i := 0; ; i++ {
		if i, off = runGates(g.next, &g.col, s, i, off); i == len(s) {
			return sc
		}
		off &^= matchBit
		if k := strings.LastIndexByte(s[seen:i], '\n'); k >= 0 {
			ls = seen + k + 1
		}
		seen = i
		sc.hit(i, ls, off)
	}
}

// runGates reads s from i in state off until the automaton reaches a
// state with matchBit: it returns where (len(s) if it does not) and that
// state (else the last). A loop of its own, so that its variables stay
// in registers.
func runGates(next []int32, col *[256]int32, s string, i int, off int32) (int, int32) {
	for ; i < len(s); i++ {
		n := next[off+col[s[i]]]
		if n < 0 {
			return i, n
		}
		off = n
	}
	return i, off
}

// newGateScan is an empty scan of s.
func newGateScan(s string) *gateScan {
	g := &gateWords
	g.once.Do(compileGates)
	return &gateScan{src: s, lines: make([][]int, len(g.list))}
}

// hit records what the gate automaton found reading byte i of the line
// starting at ls, reaching state off (matchBit cleared).
func (sc *gateScan) hit(i, ls int, off int32) {
	g := &gateWords
	s := sc.src
	for _, id := range g.out[off/g.stride] {
		w := g.list[id]
		if !w.fold && s[i+1-len(w.w):i+1] != w.w {
			continue
		}
		if l := sc.lines[id]; len(l) == 0 || l[len(l)-1] != ls {
			sc.lines[id] = append(l, ls)
		}
		if g.fold[id] && (len(sc.folded) == 0 || sc.folded[len(sc.folded)-1] != ls) {
			sc.folded = append(sc.folded, ls)
		}
	}
}

// has reports whether s holds one of words (any case when fold).
func (sc *gateScan) has(fold bool, words []string) bool {
	for _, w := range words {
		if len(sc.lines[gateID(w, fold)]) > 0 {
			return true
		}
	}
	return false
}

// gateID is a registered word's id.
func gateID(w string, fold bool) int {
	gateWords.once.Do(compileGates)
	id, ok := gateWords.ids[gateWord{w, fold}]
	if !ok {
		panic("redact: gate word " + w + " is not registered")
	}
	return id
}

// edit is a part [from, to) of a scanned text that byLines replaced: in
// the new text it starts at newFrom, and sub is its scan.
type edit struct {
	from, to, newFrom int
	sub               *gateScan
}

// splice is the scan of src, which is sc's text with edits (in order,
// each starting at a line's start and ending after a line's end): sc's
// lines outside the edits, shifted, and the edits' own. The patterns
// change a large text in a few parts: those alone are scanned again.
func (sc *gateScan) splice(src string, edits []edit) *gateScan {
	out := &gateScan{src: src, lines: make([][]int, len(sc.lines))}
	merge := func(old []int, sub func(e edit) []int) []int {
		var l []int
		shift, ei := 0, 0
		flush := func(e edit) {
			for _, x := range sub(e) {
				l = append(l, e.newFrom+x)
			}
			shift = e.newFrom + len(e.sub.src) - e.to
		}
		for _, x := range old {
			for ei < len(edits) && edits[ei].to <= x {
				flush(edits[ei])
				ei++
			}
			if ei < len(edits) && x >= edits[ei].from {
				continue // the edit's scan has it
			}
			l = append(l, x+shift)
		}
		for ; ei < len(edits); ei++ {
			flush(edits[ei])
		}
		return l
	}
	for id := range sc.lines {
		out.lines[id] = merge(sc.lines[id], func(e edit) []int { return e.sub.lines[id] })
	}
	out.folded = merge(sc.folded, func(e edit) []int { return e.sub.folded })
	return out
}
