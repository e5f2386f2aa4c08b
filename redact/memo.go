package redact

import (
	"slices"
	"sync"
)

// A step's texts reach the redactor several times (its command in the
// step_start event, the step event, the audit entry and the parameters;
// a plan's goal in each step's events): a Set remembers what Named
// returned for a text while the set did not change, and answers the same
// text again without scanning it. Any change to the set (a value added,
// found or made Known) forgets every answer: an answer is only reused
// for the set it was computed with.
//
// Texts longer than maxMemoText, up to maxBigText, are remembered apart,
// the last bigEntries of them: a step's observation (up to twice the
// capture's 32 KiB) is redacted for its event, its audit line, the audit
// log and its record, one after the other.
const (
	maxMemoText  = 16 << 10  // longer texts are remembered in big only
	maxMemoBytes = 4 << 20   // texts remembered in all, before forgetting them all
	maxBigText   = 256 << 10 // longer texts are not remembered
	bigEntries   = 4
)

type memo struct {
	gen   uint64 // the set's gen the answers are for
	bytes int
	m     map[memoKey]memoAnswer
	big   bigMemo[memoKey, memoAnswer]
}

// bigMemo is the last few long texts' answers, in a ring.
type bigMemo[K comparable, A any] struct {
	keys [bigEntries]K
	ans  [bigEntries]A
	n    int // entries stored; the next goes at n%bigEntries
}

func (b *bigMemo[K, A]) get(k K) (A, bool) {
	for i := range min(b.n, bigEntries) {
		if b.keys[i] == k {
			return b.ans[i], true
		}
	}
	var zero A
	return zero, false
}

func (b *bigMemo[K, A]) put(k K, a A) {
	b.keys[b.n%bigEntries], b.ans[b.n%bigEntries] = k, a
	b.n++
}

type memoKey struct {
	text        string
	sendSecrets bool
}

type memoAnswer struct {
	out   string
	names []string
}

// memoNamed is named, remembered for the set as it is.
func (s *Set) memoNamed(text string, sendSecrets bool) (string, []string) {
	k := memoKey{text, sendSecrets}
	big := len(text) > maxMemoText
	s.mu.Lock()
	gen := s.gen
	if s.memo.gen == gen {
		var a memoAnswer
		var ok bool
		if big { // not hashed for the map: a stream's chunks are all big
			a, ok = s.memo.big.get(k)
		} else {
			a, ok = s.memo.m[k]
		}
		if ok {
			s.mu.Unlock()
			return a.out, slices.Clone(a.names)
		}
	}
	s.mu.Unlock()
	out, names := s.named(text, sendSecrets)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen { // the set changed meanwhile (this text's patterns taught it a value): not remembered
		return out, names
	}
	if s.memo.gen != gen || s.memo.m == nil {
		s.memo = memo{gen: gen, m: map[memoKey]memoAnswer{}}
	}
	if big {
		s.memo.big.put(k, memoAnswer{out, slices.Clone(names)})
		return out, names
	}
	if s.memo.bytes+len(text) > maxMemoBytes {
		s.memo.m, s.memo.bytes = map[memoKey]memoAnswer{}, 0
	}
	s.memo.m[k] = memoAnswer{out, slices.Clone(names)}
	s.memo.bytes += len(text)
	return out, names
}

// patternMemo remembers String's answers: the patterns alone are fixed,
// so an answer is the answer for as long as the process runs (the audit
// log hides each entry's fields again, as the executor did).
var patternMemo textMemo

// textMemo remembers a pure function's answers, up to maxMemoText a text
// and maxMemoBytes in all (then it forgets them all), and the last
// bigEntries texts up to maxBigText.
type textMemo struct {
	mu    sync.Mutex
	bytes int
	m     map[string]string
	big   bigMemo[string, string]
}

func (t *textMemo) answer(s string, f func(string) string) string {
	if len(s) > maxBigText {
		return f(s)
	}
	big := len(s) > maxMemoText
	t.mu.Lock()
	var out string
	var ok bool
	if big {
		out, ok = t.big.get(s)
	} else {
		out, ok = t.m[s]
	}
	t.mu.Unlock()
	if ok {
		return out
	}
	out = f(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if big {
		t.big.put(s, out)
		return out
	}
	if t.m == nil || t.bytes+len(s) > maxMemoBytes {
		t.m, t.bytes = map[string]string{}, 0
	}
	t.m[s] = out
	t.bytes += len(s)
	return out
}
