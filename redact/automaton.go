package redact

// automaton is an Aho-Corasick matcher compiled to a dense DFA over byte
// classes: one table lookup per byte of text, whatever the number of
// needles. Bytes no needle holds share class 0.
type automaton struct {
	class  [256]uint8
	nclass int32
	delta  []int32 // delta[state*nclass+class] is the next state (while compiling; then next)
	// best[state] is the longest needle that ends where the automaton is in
	// state (0: none) and which secret it belongs to.
	best   []int32
	secret []int32
	maxLen int
	// next is delta with each state as its offset in delta (state*nclass),
	// and matchBit set on a state where a needle ends: the scans' table.
	next []int32
	// squeezedTr, base64Tr and hexTr map a byte to its class in those
	// views (tables).
	squeezedTr, base64Tr, hexTr [256]int16
}

// matchBit marks, in next, a state where a needle ends.
const matchBit = -1 << 31

// matched is what a scan records where the automaton, read byte j of the
// text through tr, reaches the state at offset off (a needle ends there):
// the needle's span, which starts where its first byte was read (the
// bytes tr leaves out are not counted).
func (a *automaton) matched(tr *[256]int16, s string, j int, off int32, spans []span) []span {
	st := off / a.nclass
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
	}
	nc := a.nclass
	// the trie; -1 is "no edge" until the failure links fill it in
	newState := func() int32 {
		s := int32(len(a.best))
		for range nc {
			a.delta = append(a.delta, -1)
		}
		a.best, a.secret = append(a.best, 0), append(a.secret, 0)
		return s
	}
	newState()
	for i, n := range needles {
		s := int32(0)
		for j := 0; j < len(n); j++ {
			c := int32(a.class[n[j]])
			if a.delta[s*nc+c] < 0 {
				t := newState()
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
	a.next = nextTable(a.delta, nc, func(t int32) bool { return a.best[t] > 0 })
	a.delta = nil
	a.tables()
	return a
}

// fillFailures completes a trie's transitions (delta: nstates rows of nc
// columns, -1 for no edge) into an Aho-Corasick automaton: breadth first,
// each state's failure link, and its missing edges through that link.
// inherit(s, f) is called for each state s but the root, f its failure
// link, once f's own outputs are complete: it merges them into s's.
func fillFailures(delta []int32, nc int32, nstates int, inherit func(s, f int32)) {
	fail := make([]int32, nstates)
	queue := make([]int32, 0, nstates)
	for c := range nc {
		if t := delta[c]; t < 0 {
			delta[c] = 0
		} else {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		inherit(s, fail[s])
		for c := range nc {
			t := delta[s*nc+c]
			if t < 0 {
				delta[s*nc+c] = delta[fail[s]*nc+c]
				continue
			}
			fail[t] = delta[fail[s]*nc+c]
			queue = append(queue, t)
		}
	}
}

// nextTable is delta as the scans read it: each target's row offset, with
// matchBit where a match ends there.
func nextTable(delta []int32, nc int32, match func(t int32) bool) []int32 {
	next := make([]int32, len(delta))
	for i, t := range delta {
		next[i] = t * nc
		if match(t) {
			next[i] |= matchBit
		}
	}
	return next
}
