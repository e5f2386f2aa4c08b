package redact

// automaton is an Aho-Corasick matcher compiled to a dense DFA over byte
// classes: one table lookup per byte of text, whatever the number of
// needles. Bytes no needle holds share class 0.
type automaton struct {
	class  [256]uint8
	nclass int32
	// stride is a row's width in next: the classes, then the columns
	// stayCol, rootCol and flagCol.
	stride int32
	delta  []int32 // delta[state*nclass+class] is the next state (while compiling)
	// best[state] is the longest needle that ends where the automaton is in
	// state (0: none) and which secret it belongs to.
	best   []int32
	secret []int32
	// depth[state] is how many bytes the state has read: the length of
	// the longest needle prefix the text ends with there.
	depth  []int32
	maxLen int
	minLen int // the shortest needle
	// next is delta with each state as its offset in next (state*stride),
	// and matchBit set on a state where a needle ends: the scans' table.
	next []int32
	// squeezedTr and hexTr map a byte to its class in those views
	// (tables), or to skipByte, breakByte or prefixByte.
	squeezedTr, hexTr [256]int16
	// sqCol and hexCol are the same as columns of next: a class,
	// or stayCol (a byte the view leaves out), rootCol (one that breaks a
	// run) or flagCol (hex: '0' and '\\', which may start a prefix the view
	// leaves out: the scan looks at them apart).
	sqCol, hexCol [256]int32
	// fed is 1 for a byte the hex view feeds its automaton through its
	// class ('0' is decided on apart).
	fed [256]uint8
}

// The columns after a row's classes: stayCol goes back to the state
// itself (no match reported again), rootCol to the root, flagCol to the
// root with matchBit set (the scan's slow path decides).
const (
	stayCol = iota
	rootCol
	flagCol
	extraCols
)

// matchBit marks, in next, a state where a needle ends.
const matchBit = -1 << 31

// matched is what a scan records where the automaton, read byte j of the
// text through tr, reaches the state at offset off (a needle ends there):
// the needle's span, which starts where its first byte was read (the
// bytes tr leaves out are not counted).
func (a *automaton) matched(tr *[256]int16, s string, j int, off int32, spans []span) []span {
	st := off / a.stride
	l, k := int(a.best[st]), j
	for n := 0; ; k-- {
		if tr[s[k]] >= 0 {
			if n++; n == l {
				break
			}
		}
	}
	return append(spans, span{from: k, to: j + 1, secret: int(a.secret[st])})
}

// newAutomaton compiles needles (owner[i] is the secret needles[i] shows).
// It returns nil when there are none.
func newAutomaton(needles []string, owner []int) *automaton {
	if len(needles) == 0 {
		return nil
	}
	a := &automaton{nclass: 1}
	for _, n := range needles {
		for i := 0; i < len(n); i++ {
			if a.class[n[i]] == 0 {
				a.class[n[i]] = uint8(a.nclass)
				a.nclass++
			}
		}
		a.maxLen = max(a.maxLen, len(n))
		if a.minLen == 0 || len(n) < a.minLen {
			a.minLen = len(n)
		}
	}
	nc := a.nclass
	// the trie; 0 (the root, no state's child) is "no edge" until the
	// failure links fill it in. Its states are at most one a needle's byte,
	// and one table of that size is made once: appending row by row moved
	// megabytes.
	bound := 1
	for _, n := range needles {
		bound += len(n)
	}
	a.delta = make([]int32, nc, bound*int(nc))
	a.best, a.secret = make([]int32, 1, bound), make([]int32, 1, bound)
	a.depth = make([]int32, 1, bound)
	newState := func(depth int) int32 {
		s := int32(len(a.best))
		a.delta = a.delta[:len(a.delta)+int(nc)] // zeroed by make
		a.best, a.secret = append(a.best, 0), append(a.secret, 0)
		a.depth = append(a.depth, int32(depth))
		return s
	}
	for i, n := range needles {
		s := int32(0)
		for j := 0; j < len(n); j++ {
			c := int32(a.class[n[j]])
			if a.delta[s*nc+c] == 0 {
				t := newState(j + 1)
				a.delta[s*nc+c] = t
			}
			s = a.delta[s*nc+c]
		}
		if int32(len(n)) > a.best[s] {
			a.best[s], a.secret[s] = int32(len(n)), int32(owner[i])
		}
	}
	// the longest needle ending at each state, through its failure chain
	fillFailures(a.delta, nc, len(a.best), func(s, f int32) {
		if a.best[f] > a.best[s] {
			a.best[s], a.secret[s] = a.best[f], a.secret[f]
		}
	})
	a.stride = nc + extraCols
	match := make([]bool, len(a.best))
	for t, l := range a.best {
		match[t] = l > 0
	}
	a.next = nextTable(a.delta, nc, extraCols, match, func(row []int32, off int32) {
		row[stayCol], row[rootCol], row[flagCol] = off, 0, matchBit
	})
	a.delta = nil
	a.tables()
	return a
}

// foldCase makes a read an upper-case ASCII letter as its lower case, for
// an automaton whose needles have no upper-case letter (the squeezed
// one: shapes.go): its views' tables are made again.
func (a *automaton) foldCase() {
	for c := byte('A'); c <= 'Z'; c++ {
		a.class[c] = a.class[c+'a'-'A']
	}
	a.tables()
}

// fillFailures completes a trie's transitions (delta: nstates rows of nc
// columns, 0 for no edge: the root is no state's child) into an
// Aho-Corasick automaton: breadth first,
// each state's failure link, and its missing edges through that link.
// inherit(s, f) is called for each state s but the root, f its failure
// link, once f's own outputs are complete: it merges them into s's.
func fillFailures(delta []int32, nc int32, nstates int, inherit func(s, f int32)) {
	fail := make([]int32, nstates)
	queue := make([]int32, 0, nstates)
	for c := range nc {
		if t := delta[c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		inherit(s, fail[s])
		for c := range nc {
			t := delta[s*nc+c]
			if t == 0 {
				delta[s*nc+c] = delta[fail[s]*nc+c]
				continue
			}
			fail[t] = delta[fail[s]*nc+c]
			queue = append(queue, t)
		}
	}
}

// nextTable is delta as the scans read it: rows of nc+extra columns,
// each target as its row's offset, with matchBit where a match ends
// there (match[t]); extras fills each row's extra columns (row is those
// columns, off the row's own offset).
func nextTable(delta []int32, nc, extra int32, match []bool, extras func(row []int32, off int32)) []int32 {
	stride := nc + extra
	n := int32(len(delta)) / nc
	next := make([]int32, int(n*stride))
	for s := range n {
		row, out := delta[s*nc:(s+1)*nc], next[s*stride:s*stride+nc]
		for c, t := range row {
			out[c] = t * stride
			if match[t] {
				out[c] |= matchBit
			}
		}
		extras(next[s*stride+nc:(s+1)*stride], s*stride)
	}
	return next
}
