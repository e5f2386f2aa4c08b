package redact

import (
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
	// columns (flagCol for a byte that is not ASCII).
	next   []int32
	stride int32
	// col is each byte's column in next: its class, or flagCol for a byte
	// that is not ASCII.
	col [256]int32
}

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
			g.delta = append(g.delta, -1)
		}
		g.out = append(g.out, nil)
		return s
	}
	newState()
	for id, w := range g.list {
		s := int32(0)
		for i := 0; i < len(w.w); i++ {
			c := int32(g.class[w.w[i]])
			if g.delta[s*nc+c] < 0 {
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
	g.next = nextTable(g.delta, nc, extraCols, func(t int32) bool { return len(g.out[t]) > 0 }, func(row []int32, off int32) {
		row[stayCol], row[rootCol] = off, 0
		row[flagCol] = matchBit // a byte that is not ASCII: the root, looked at apart
	})
	g.delta = nil
	for c := range 256 {
		g.col[c] = int32(g.class[c])
		if c >= 0x80 {
			g.col[c] = nc + flagCol
		}
	}
}

// gateScan is where a text holds each gate word: the starts of the lines
// holding it (ascending, each once), and of the lines holding a byte that
// is not ASCII.
type gateScan struct {
	src      string
	lines    [][]int // by word id
	nonASCII []int
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
		sc.hit(i, ls, s[i], off)
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

// hit records what the gate automaton found reading byte i (c) of the
// line starting at ls, reaching state off (matchBit cleared).
func (sc *gateScan) hit(i, ls int, c byte, off int32) {
	g := &gateWords
	if c >= 0x80 {
		if len(sc.nonASCII) == 0 || sc.nonASCII[len(sc.nonASCII)-1] != ls {
			sc.nonASCII = append(sc.nonASCII, ls)
		}
		return
	}
	s := sc.src
	for _, id := range g.out[off/g.stride] {
		w := g.list[id]
		if !w.fold && s[i+1-len(w.w):i+1] != w.w {
			continue
		}
		if l := sc.lines[id]; len(l) == 0 || l[len(l)-1] != ls {
			sc.lines[id] = append(l, ls)
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
