package redact

// Longest is the length of the longest value the set looks for (at most
// maxPiece bytes: a longer value is looked for by its lines and pieces);
// 0 for a nil or empty set. Each shape of a value spans a bounded
// multiple of its length in a text: a stream's redactor holds back that
// much of its end (engine/stream.go).
func (s *Set) Longest() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.entries {
		n = max(n, len(e.value))
	}
	for _, v := range s.short {
		n = max(n, len(v))
	}
	return min(n, maxPiece)
}
