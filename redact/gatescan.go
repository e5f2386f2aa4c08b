package redact

import (
	"slices"
	"strings"
	"sync"
)

// The patterns' gate words are looked for all at once: a word longer
// than gateStride (3) bytes by a filter that reads the byte pairs at
// multiples of gateStride, four at a turn (each such word has one of its
// pairs at offsets 0 to 2 there: pairTab, both cases for a word gated in
// any case); only where a pair's group may go on with the next byte are
// its words compared with the text. A shorter word ("?", "&", "-p",
// "sk-", "://", "ſ", the Kelvin sign) has a byte no base64 or plain word
// holds, its anchor, found with strings.IndexByte (assembly, many bytes
// at once): one pass for each anchor, only where the text holds it. The Aho-Corasick automaton over the words (A-Z
// read as a-z), one table lookup a byte, is what the unfiltered scan
// (scanFused) runs. Looking for each word with strings.Index cost more
// than the patterns on an output holding few of them (base64, in which
// the first letters of "key", "pass" or "api" are everywhere).

// gateWord is a word a gate needs: in any case (fold) or as written.
type gateWord struct {
	w    string
	fold bool
}

// gateWords holds every gate's words; their automaton is compiled at the
// first scan.
var gateWords gateWordTables

type gateWordTables struct {
	once sync.Once
	ids  map[gateWord]int
	// byWord is ids by the word alone, one map for each fold: a string
	// key is hashed faster than a struct (gateID is asked often).
	byWord [2]map[string]int
	list   []gateWord
	class  [256]uint8
	nc     int32
	delta  []int32
	out    [][]int32 // word ids ending in each state, through its failure chain
	// next is delta with each state as its offset (state*stride), matchBit
	// set where a word ends: the scan's table, with automaton's extra
	// columns.
	next   []int32
	stride int32
	// col is each byte's column in next: its class.
	col [256]int32
	// fold[id] says word id is one of foldRunes.
	fold []bool
	// pairTab maps a byte pair (first | second<<8) to the group of words
	// it may be in, as pairGroups[pairTab-1] (0: none): a word longer
	// than gateStride by its pairs at offsets 0 to gateStride-1.
	pairTab    [1 << 16]uint8
	pairGroups [][]pairCand
	// pairNext[group-1] is the bytes a group's words can have after
	// the pair (a bitmap; every byte where a word may end there).
	pairNext [][4]uint64
	// pairMask is pairNext coarser, for the loop: the classes (nextClass)
	// of the bytes a pair's words can have after it (0: no group).
	pairMask [1 << 16]uint8
	// anchor maps the bytes the words of gateStride bytes or fewer are
	// found by to their words, anchorCands[anchor-1] (0: none; off: the
	// anchor's offset in the word).
	anchor      [256]uint8
	anchorCands [][]pairCand
	// nextClass is a byte's class for pairMask: one bit of eight, the
	// same for a letter in either case; the anchors alone are in
	// anchorClass.
	nextClass [256]uint8
	// watchMask and watchClass are pairMask and nextClass that also stop
	// at a sample holding a watched byte: scanGates reads them until the
	// first such sample.
	watchMask  [1 << 16]uint8
	watchClass [256]uint8
}

// watchedBytes are the bytes whose absence the views ask of a text
// (a dump's offset column ends at ' ' or ':'; escapes start with '%' or
// '='): scanGates, which reads every byte, finds where they may first
// be, and the views look for them from there only (gateScan.watchFrom).
var watchedBytes = [...]byte{' ', ':', '%', '='}

// watched is 1 for each of watchedBytes.
var watched = func() (t [256]uint8) {
	for _, c := range watchedBytes {
		t[c] = 1
	}
	return t
}()

// gateStride is the pair filter's step: a word longer than it has a
// pair at an offset below it at each multiple of it it spans.
const gateStride = 3

// pairCand is a word (its id) that starts off bytes before a pair or
// an anchor.
type pairCand struct {
	id  int32
	off int32
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
		if g.byWord[b2i(w.fold)] == nil {
			g.byWord[b2i(w.fold)] = map[string]int{}
		}
		g.byWord[b2i(w.fold)][w.w] = len(g.list)
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
	g.pairs()
}

// pairs fills the filter's tables: pairTab and pairGroups.
func (g *gateWordTables) pairs() {
	cases := func(c byte, fold bool) []byte {
		if fold && c >= 'a' && c <= 'z' {
			return []byte{c, c - 'a' + 'A'}
		}
		if fold && c >= 'A' && c <= 'Z' {
			panic("redact: a gate word in any case is written in lower case: " + string(c))
		}
		return []byte{c}
	}
	// the candidates, by where their word starts (the larger offset
	// first, as a group lists them), and each pair's as a bitmap of them
	var cands []pairCand
	type set [4]uint64
	var sets []set
	var keys []uint16
	at := make([]uint16, 1<<16) // a pair's set: sets[at-1]
	add := func(id, off int, first, second []byte) {
		n := len(cands)
		cands = append(cands, pairCand{int32(id), int32(off)})
		for _, a := range first {
			for _, b := range second {
				k := uint16(a) | uint16(b)<<8 // as nextPair reads a pair
				if at[k] == 0 {
					sets = append(sets, set{})
					at[k] = uint16(len(sets))
					keys = append(keys, k)
				}
				sets[at[k]-1][n>>6] |= 1 << (n & 63)
			}
		}
	}
	type spec struct {
		id, off       int
		first, second []byte
	}
	var specs []spec
	for id, w := range g.list {
		if len(w.w) > gateStride { // its pairs at offsets 0 to gateStride-1
			for off := range gateStride {
				specs = append(specs, spec{id, off, cases(w.w[off], w.fold), cases(w.w[off+1], w.fold)})
			}
			continue
		}
		// a short word: found by its anchor, its first byte that is not
		// a letter or a digit (else its first), wherever a sample's three
		// bytes hold it: the pair's first or second byte (its pairs
		// here) or the byte after the pair (every pair's mask has
		// anchorClass)
		off := 0
		for i := range len(w.w) {
			if c := w.w[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				off = i
				break
			}
		}
		c := w.w[off]
		if w.fold && c >= 'a' && c <= 'z' {
			panic("redact: a short gate word in any case needs an anchor that is not a letter: " + w.w)
		}
		if g.anchor[c] == 0 {
			g.anchorCands = append(g.anchorCands, nil)
			g.anchor[c] = uint8(len(g.anchorCands))
		}
		g.anchorCands[g.anchor[c]-1] = append(g.anchorCands[g.anchor[c]-1], pairCand{int32(id), int32(off)})
		specs = append(specs, spec{id, off, []byte{c}, anyByte}, spec{id, off - 1, anyByte, []byte{c}})
	}
	for _, cs := range g.anchorCands {
		// the larger offset first: the word starting first
		slices.SortStableFunc(cs, func(a, b pairCand) int { return int(b.off - a.off) })
	}
	for c := range 256 {
		g.nextClass[c] = 1 << (c & 7)
		if c&7 == 7 { // class 7 is the anchors': the same for both cases
			g.nextClass[c] = 1 << ((c >> 3) & 3)
		}
		if g.anchor[c] != 0 {
			g.nextClass[c] = anchorClass
		}
	}
	slices.SortStableFunc(specs, func(a, b spec) int { return b.off - a.off })
	for _, sp := range specs {
		add(sp.id, sp.off, sp.first, sp.second)
	}
	if len(cands) > 256 {
		panic("redact: too many gate words for the pair filter")
	}
	index := map[set]uint8{}
	var groupMask []uint8
	for _, k := range keys {
		st := sets[at[k]-1]
		i, ok := index[st]
		if !ok {
			if len(g.pairGroups) == 255 {
				panic("redact: too many gate word pairs")
			}
			var group []pairCand
			var next [4]uint64
			for n, c := range cands {
				if st[n>>6]&(1<<(n&63)) == 0 {
					continue
				}
				group = append(group, c)
				w := g.list[c.id]
				after := 2 + int(c.off) // the byte after the pair, in the word
				if after >= len(w.w) {
					next = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
					continue
				}
				for _, b := range cases(w.w[after], w.fold) {
					next[b>>6] |= 1 << (b & 63)
				}
			}
			g.pairGroups = append(g.pairGroups, group)
			g.pairNext = append(g.pairNext, next)
			var mask uint8 // the group's pairMask, once for all its pairs
			for c := range 256 {
				if next[c>>6]&(1<<(c&63)) != 0 {
					mask |= g.nextClass[c]
				}
			}
			groupMask = append(groupMask, mask)
			i = uint8(len(g.pairGroups))
			index[st] = i
		}
		g.pairTab[k] = i
		g.pairMask[k] |= groupMask[i-1]
	}
	for k := range g.pairMask {
		g.pairMask[k] |= anchorClass
		g.watchMask[k] = g.pairMask[k]
		if watched[k&0xff]|watched[k>>8] != 0 {
			g.watchMask[k] = 0xff
		}
	}
	for c := range 256 {
		g.watchClass[c] = g.nextClass[c]
		if watched[c] != 0 {
			g.watchClass[c] = anchorClass // in every pair's mask
		}
	}
}

// anyByte is every byte.
var anyByte = func() []byte {
	b := make([]byte, 256)
	for c := range b {
		b[c] = byte(c)
	}
	return b
}()

// anchorClass is the anchors' class in nextClass and in every pair's
// mask: a sample stops wherever the byte after its pair is an anchor.
const anchorClass = 1 << 7

// wordAt reports whether gate word id is in s at at (s holds its length
// from there): in any case (fold) or as written.
func (g *gateWordTables) wordAt(s string, at int, id int32) bool {
	w := g.list[id]
	if !w.fold {
		return s[at:at+len(w.w)] == w.w
	}
	for i := 0; i < len(w.w); i++ {
		c := s[at+i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w.w[i] {
			return false
		}
	}
	return true
}

// gateScan is where a text holds each gate word: the starts of the lines
// holding it (ascending, each once), and of the lines holding one of
// foldRunes.
type gateScan struct {
	src    string
	lines  [][]int // by word id (nil until one is found: linesOf)
	folded []int
	// found counts the words recorded (has is false for every word when
	// it is 0).
	found int
	// src holds none of watchedBytes before clean, none at all when
	// clean is len(src)+1 (scanGates).
	clean int
}

// watchFrom is where watched byte c may first be in s: none is before it
// (len(s) when s holds none). 0 when sc is nil or of another text.
func (sc *gateScan) watchFrom(s string, c byte) int {
	if sc == nil || watched[c] == 0 || sc.src != s {
		return 0
	}
	return min(sc.clean, len(s))
}

// scanGates finds every gate word of s by the pair filter (the short
// words by their anchors, in the samples' bytes too). The lines it
// records are those the automaton finds (scanGatesAutomaton,
// refScanGates in the tests). Until a sample holds one of watchedBytes
// it also stops at those (watchMask): where the first is, or that there
// is none, is sc.clean.
func scanGates(s string) *gateScan {
	sc := newGateScan(s)
	g := &gateWords
	var at lineAt
	mask, class := &g.watchMask, &g.watchClass
	watching := true
	p := 0
	for ; ; p += gateStride {
		var ok bool
		if p, ok = nextPair(mask, class, s, p); !ok {
			break
		}
		if watching && watched[s[p]]|watched[s[p+1]]|watched[s[min(p+2, len(s)-1)]] != 0 {
			// no sample before p holds one
			sc.clean, watching = p, false
			mask, class = &g.pairMask, &g.nextClass
		}
		if gi := g.pairTab[uint16(s[p])|uint16(s[p+1])<<8]; gi != 0 {
			if c := p + 2; c >= len(s) || g.pairNext[gi-1][s[c]>>6]&(1<<(s[c]&63)) != 0 {
				sc.check(s, p, g.pairGroups[gi-1], &at)
			}
		}
		if p+2 < len(s) {
			if ai := g.anchor[s[p+2]]; ai != 0 {
				sc.check(s, p+2, g.anchorCands[ai-1], &at)
			}
		}
	}
	if p == len(s)-1 { // the last byte, alone
		if ai := g.anchor[s[p]]; ai != 0 {
			sc.check(s, p, g.anchorCands[ai-1], &at)
		}
		if watching && watched[s[p]] != 0 {
			sc.clean, watching = p, false
		}
	}
	if watching {
		sc.clean = len(s) + 1
	}
	if len(sc.folded) > 1 { // ſ's and the Kelvin sign's lines, merged
		slices.Sort(sc.folded)
		sc.folded = slices.Compact(sc.folded)
	}
	return sc
}

// lineAt finds the starts of lines holding offsets that mostly come in
// order: ls starts the line holding seen.
type lineAt struct{ ls, seen int }

// start is where the line holding s[i] starts.
func (l *lineAt) start(s string, i int) int {
	if i < l.seen {
		// a few bytes back: on the same line unless a newline is
		// between (then the line before, once for that newline)
		if strings.IndexByte(s[i:l.seen], '\n') >= 0 {
			l.ls = strings.LastIndexByte(s[:i], '\n') + 1
		}
	} else if k := strings.LastIndexByte(s[l.seen:i], '\n'); k >= 0 {
		l.ls = l.seen + k + 1
	}
	l.seen = i
	return l.ls
}

// check compares the words of cands, each starting off bytes before p,
// with s, and records those there.
func (sc *gateScan) check(s string, p int, cands []pairCand, l *lineAt) {
	g := &gateWords
	for _, c := range cands {
		at := p - int(c.off)
		if at < 0 || at+len(g.list[c.id].w) > len(s) || !g.wordAt(s, at, c.id) {
			continue
		}
		sc.record(int(c.id), l.start(s, at))
	}
}

// nextPair is the first pair at a multiple of gateStride from p on (p
// one) whose group may go on with the byte after it (pairMask,
// nextClass), or followed by an anchor: where, and whether there is one.
// It looks at four pairs a turn.
func nextPair(mask *[1 << 16]uint8, class *[256]uint8, s string, p int) (int, bool) {
	for ; p+4*gateStride+1 <= len(s); p += 4 * gateStride {
		b := s[p : p+4*gateStride+1]
		if mask[uint16(b[0])|uint16(b[1])<<8]&class[b[2]]|
			mask[uint16(b[3])|uint16(b[4])<<8]&class[b[5]]|
			mask[uint16(b[6])|uint16(b[7])<<8]&class[b[8]]|
			mask[uint16(b[9])|uint16(b[10])<<8]&class[b[11]] != 0 {
			break
		}
	}
	for ; p+1 < len(s); p += gateStride {
		k := uint16(s[p]) | uint16(s[p+1])<<8
		next := uint8(0xff) // the text ends after the pair
		if p+2 < len(s) {
			next = class[s[p+2]]
		}
		if mask[k]&next != 0 {
			return p, true
		}
	}
	return p, false
}

// scanGatesAutomaton is scanGates by the automaton alone: one table
// lookup a byte (the scan before the filter; the fused loop's).
func scanGatesAutomaton(s string) *gateScan {
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
	return &gateScan{src: s} // lines: made at the first word found
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
		sc.record(int(id), ls)
	}
}

// linesOf is the starts of the lines holding word id.
func (sc *gateScan) linesOf(id int) []int {
	if sc.lines == nil {
		return nil
	}
	return sc.lines[id]
}

// record notes that word id is on the line starting at ls (the lines
// come in order).
func (sc *gateScan) record(id, ls int) {
	if sc.lines == nil {
		sc.lines = make([][]int, len(gateWords.list))
	}
	sc.found++
	if l := sc.lines[id]; len(l) == 0 || l[len(l)-1] != ls {
		sc.lines[id] = append(l, ls)
	}
	if gateWords.fold[id] && (len(sc.folded) == 0 || sc.folded[len(sc.folded)-1] != ls) {
		sc.folded = append(sc.folded, ls)
	}
}

// has reports whether s holds one of words (any case when fold).
func (sc *gateScan) has(fold bool, words []string) bool {
	if sc.found == 0 {
		return false
	}
	for _, w := range words {
		if len(sc.linesOf(gateID(w, fold))) > 0 {
			return true
		}
	}
	return false
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gateID is a registered word's id.
func gateID(w string, fold bool) int {
	gateWords.once.Do(compileGates)
	id, ok := gateWords.byWord[b2i(fold)][w]
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
	out := &gateScan{src: src, lines: make([][]int, len(gateWords.list))}
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
	for id := range out.lines {
		out.lines[id] = merge(sc.linesOf(id), func(e edit) []int { return e.sub.linesOf(id) })
	}
	out.folded = merge(sc.folded, func(e edit) []int { return e.sub.folded })
	for _, l := range out.lines {
		out.found += len(l)
	}
	return out
}
