package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLen is the shortest value a Set takes: a shorter one ("1", "true",
// "admin", a port) is everywhere in ordinary output, and hiding each of
// its occurrences would destroy the output without protecting much. The
// patterns still hide a short value where its name says secret
// (PASSWORD=abc).
const MinLen = 8

// maxPiece is the longest value a Set looks for whole: a longer one is
// looked for by its lines and by 64-byte pieces of them, which keeps the
// automata small and still hides every part of it.
const maxPiece = 256

// Kind says how agent came to know a value.
type Kind int

const (
	// Known values were given to agent as secrets: its API keys, the
	// inventory's and vault's secrets, the become password, --var values
	// marked secret. They never reach the model, --send-secrets or not.
	Known Kind = iota
	// Found values look secret: the patterns redacted them in some output,
	// or a file a step read holds them under a secret name. --send-secrets
	// sends them.
	Found
)

// Set is a session's secret set: the values agent knows or found to be
// secret, hidden in every later text in each shape shapes.go lists, after
// the patterns (which add what they find to the set: once seen, always
// hidden). A nil *Set redacts by the patterns alone. A Set is safe for
// concurrent use.
type Set struct {
	mu      sync.Mutex
	entries []entry
	index   map[string]int
	m       atomic.Pointer[matcher] // nil: compile at the next use
	found   int                     // how many entries are Found
	// short are Known values of minShort to MinLen bytes: hidden as they
	// are only, as agent always hid its inventory's secrets.
	short []string
	// gen counts the set's changes; memo is what Named returned for a
	// text while the set was as gen says (memo.go).
	gen  uint64
	memo memo
	// noFilter makes the set's scans read every byte (scanFused): the
	// tests' reference for the filters.
	noFilter bool
}

// minShort is the shortest Known value hidden (as is only).
const minShort = 4

type entry struct {
	value, name string
	kind        Kind
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{index: map[string]int{}} }

// Add adds value, called name (its mark: [REDACTED:NAME]), to the set. A
// value shorter than MinLen (after trimming white space) is not added; a
// Found value that looks like no secret (a path, a reference to a
// variable, a placeholder) is not either. A private key's PEM block adds
// its body's lines. Add reports whether the set changed.
func (s *Set) Add(name, value string, kind Kind) bool {
	if s == nil {
		return false
	}
	value = strings.TrimSpace(value)
	if kind == Known && len(value) >= minShort && len(squeeze(value)) < MinLen {
		s.mu.Lock()
		defer s.mu.Unlock()
		if slices.Contains(s.short, value) {
			return false
		}
		s.short = append(s.short, value)
		s.gen++
		slices.SortFunc(s.short, func(a, b string) int { return len(b) - len(a) }) // longest first
		return true
	}
	if len(value) < MinLen {
		return false
	}
	if kind == Found && (!plausible(value) || !learnable(value)) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind == Found && s.found >= MaxFound {
		return false
	}
	return s.addLocked(MarkName(name), value, kind)
}

func (s *Set) addLocked(name, value string, kind Kind) bool {
	if strings.Contains(value, "-----BEGIN") || strings.Contains(value, "-----END") { // armour lines are no secret
		changed := false
		for _, line := range strings.Split(value, "\n") {
			line = strings.TrimSpace(line)
			if !strings.Contains(line, "-----") && !strings.Contains(line, ":") && (kind == Known || learnablePEMLine(line)) {
				changed = s.addPlain(name, line, kind) || changed
			}
		}
		return changed
	}
	return s.addPlain(name, value, kind)
}

// addPlain adds a value with no PEM armour: whole if short and on one
// line, and by its lines and 64-byte pieces of them.
func (s *Set) addPlain(name, value string, kind Kind) bool {
	if len(value) > maxPiece || strings.Contains(value, "\n") {
		changed := false
		if len(value) <= maxPiece {
			changed = s.addOne(name, value, kind)
		}
		for _, line := range strings.Split(value, "\n") {
			line = strings.TrimSpace(line)
			for len(line) > maxPiece {
				changed = s.addOne(name, line[:64], kind) || changed
				line = line[64:]
			}
			if len(line) >= MinLen {
				changed = s.addOne(name, line, kind) || changed
			}
		}
		return changed
	}
	return s.addOne(name, value, kind)
}

func (s *Set) addOne(name, value string, kind Kind) bool {
	if len(squeeze(value)) < MinLen {
		return false
	}
	if i, ok := s.index[value]; ok {
		if kind == Known && s.entries[i].kind != Known {
			s.entries[i].kind = Known
			s.found--
			s.m.Store(nil)
			s.gen++
			return true
		}
		return false
	}
	s.index[value] = len(s.entries)
	s.entries = append(s.entries, entry{value: value, name: name, kind: kind})
	if kind == Found {
		s.found++
	}
	s.m.Store(nil)
	s.gen++
	return true
}

// Len is the number of values in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// plausible reports whether a value found under a secret name could be
// the secret itself rather than where it is or how it is named.
func plausible(v string) bool {
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"),
		strings.HasPrefix(v, "$"), strings.HasPrefix(v, "{{"), strings.HasPrefix(v, "%("), strings.HasPrefix(v, "[REDACTED"),
		strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"):
		return false
	}
	distinct := map[rune]bool{}
	for _, r := range v {
		distinct[r] = true
		if len(distinct) >= 4 {
			return true
		}
	}
	return false // ******** or xxxxxxxx
}

// matcher is the set compiled: one automaton per view, and the names and
// kinds of the values they find.
type matcher struct {
	squeezed, hex *automaton
	fused         *fused // both, with the gate words (scanFused; fusedTables)
	fusedOnce     sync.Once
	sqf, hxf      *viewFilter
	noFilter      bool // scanAll runs scanFused (tests)
	names         []string
	kinds         []Kind
}

func (s *Set) matcher() *matcher {
	if m := s.m.Load(); m != nil {
		return m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.m.Load(); m != nil {
		return m
	}
	var n needles
	m := &matcher{}
	for i, e := range s.entries {
		n.add(i, e.value)
		m.names = append(m.names, e.name)
		m.kinds = append(m.kinds, e.kind)
	}
	m.squeezed = newAutomaton(n.squeezed, n.sqOf)
	if m.squeezed != nil {
		m.squeezed.foldCase()
	}
	m.hex = newAutomaton(n.hex, n.hexOf)
	m.sqf, m.hxf = newSqFilter(m.squeezed, n.squeezed), newHexFilter(m.hex, n.hex)
	m.noFilter = s.noFilter
	s.m.Store(m)
	return m
}

// String returns text with its secrets replaced by Redacted: every value
// of the set in every shape, then the patterns' (whose values the set
// learns; a value learned here is then looked for in the rest of the
// text too). The set's values go first: a pattern's replacement would
// cut a shape in two (xxd's character column after "token="). For logs:
// the transcript, the audit log, events.
func (s *Set) String(text string) string {
	out, _ := s.Named(text, false)
	if !strings.Contains(out, "[REDACTED:") {
		return out
	}
	return namedMarkRE.ReplaceAllString(out, Redacted)
}

// Named is String with each secret replaced by [REDACTED:NAME], for the
// model; names are the NAMEs withheld, each once. With sendSecrets
// (--send-secrets), the patterns are not applied and only Known values
// are hidden.
func (s *Set) Named(text string, sendSecrets bool) (out string, names []string) {
	if s == nil || text == "" || len(text) > maxBigText {
		return s.named(text, sendSecrets)
	}
	return s.memoNamed(text, sendSecrets)
}

func (s *Set) named(text string, sendSecrets bool) (out string, names []string) {
	if text == "" {
		return text, nil
	}
	mark := func(name string) string {
		name = MarkName(name)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return NamedMark(name)
	}
	text, _, sc := s.valuesScan(text, !sendSecrets, mark, !sendSecrets)
	if sendSecrets {
		return text, names
	}
	before, learned := s.Len(), 0
	text = redactGated(text, gateOf(text, sc), func(name, value string) string {
		if learned < maxLearnPerText && s.learn(name, value) {
			learned++
		}
		return mark(name)
	})
	if s.Len() != before {
		text, _ = s.values(text, true, mark)
	}
	return text, names
}

// namedMarkRE is a mark Named puts in place of a secret.
var namedMarkRE = regexp.MustCompile(`\[REDACTED:[A-Z0-9_]+\]`)

// learn adds a value the patterns found and reports whether the set
// learned it (guard.go).
func (s *Set) learn(name, value string) bool {
	return s != nil && !strings.HasPrefix(value, "[REDACTED") && s.Add(name, value, Found)
}

// values replaces every value of the set (Known ones only, unless found)
// in every shape by mark(its name).
func (s *Set) values(text string, found bool, mark func(name string) string) (string, bool) {
	out, changed, _ := s.valuesScan(text, found, mark, false)
	return out, changed
}

// valuesScan is values, and when gates, where text holds the patterns'
// gate words, found in the same pass (nil when the set changed the text:
// its gates are then scanned again).
func (s *Set) valuesScan(text string, found bool, mark func(name string) string, gates bool) (string, bool, *gateScan) {
	if s == nil {
		return text, false, nil
	}
	s.mu.Lock()
	n, short := len(s.entries), s.short
	s.mu.Unlock()
	changed := false
	for _, v := range short {
		if strings.Contains(text, v) {
			text, changed = strings.ReplaceAll(text, v, mark("SECRET")), true
		}
	}
	if n == 0 {
		return text, changed, nil
	}
	m := s.matcher()
	r := scanAll(text, m, gates && !changed)
	spans := r.spans
	if m.squeezed != nil {
		spans = scanDecoded(m.squeezed, text, r.dump, r.gates, spans)
		spans = scanInterleaved(m.squeezed, text, spans)
	}
	if !found {
		spans = slices.DeleteFunc(spans, func(sp span) bool { return m.kinds[sp.secret] != Known })
	}
	if len(spans) == 0 {
		return text, changed, r.gates
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for i := 0; i < len(spans); {
		from, to, secret := spans[i].from, spans[i].to, spans[i].secret
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		from = max(from, last)
		b.WriteString(text[last:from])
		b.WriteString(mark(m.names[secret]))
		last = to
	}
	b.WriteString(text[last:])
	return b.String(), true, nil
}

// Params is the package's Params with the set's values hidden too.
func (s *Set) Params(params map[string]any) map[string]any {
	return paramsWith(params, s.String)
}

// AddEnviron adds the values of the environment variables (KEY=value)
// whose names say secret (OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD, …)
// as Known: agent's own secrets, which a step's `printenv` would show.
func (s *Set) AddEnviron(environ []string) {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && SecretKey(k) {
			s.Add(k, v, Known)
		}
	}
}
