package semsearch

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzChunkRank: any text and query split into chunks within the file's
// lines and the byte bound, each line in some chunk; BM25 scores are
// finite and non-negative, one per document; result text never lets a
// path forge a line.
func FuzzChunkRank(f *testing.F) {
	f.Add([]byte("a\nb\r\nc\n"), "b", 2, 1)
	f.Add([]byte(strings.Repeat("x", 9000)), "x x", 30, 10)
	f.Add([]byte("\n\n\n"), "", 0, 0)
	f.Add([]byte("max_connections = 200\n"), "MAX-connections", 1, 0)
	f.Add([]byte("caf\xe9\x00"), "\xff", 3, 5)
	f.Fuzz(func(t *testing.T, text []byte, query string, size, overlap int) {
		if size > 1000 || size < -1000 || overlap > 1000 || overlap < -1000 {
			return
		}
		chunks := Split(text, size, overlap)
		lines := len(splitLines(text))
		covered := make([]bool, lines+1)
		for _, c := range chunks {
			if c.Start < 1 || c.End < c.Start || c.End > lines || len(c.Text) > MaxChunkBytes {
				t.Fatalf("chunk %d-%d (%d bytes) of %d lines", c.Start, c.End, len(c.Text), lines)
			}
			if utf8.Valid(text) && !utf8.ValidString(c.Text) {
				t.Fatalf("chunk cut a rune: %q", c.Text)
			}
			for i := c.Start; i <= c.End; i++ {
				covered[i] = true
			}
		}
		for i, l := range splitLines(text) {
			if len(bytes.TrimSpace(l)) > 0 && !covered[i+1] {
				t.Fatalf("line %d %q in no chunk", i+1, l)
			}
		}
		docs := make([]string, len(chunks))
		for i, c := range chunks {
			docs[i] = c.Text
		}
		scores := BM25(query, docs)
		if len(scores) != len(docs) {
			t.Fatalf("%d scores for %d docs", len(scores), len(docs))
		}
		for _, s := range scores {
			if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
				t.Fatalf("score %v", s)
			}
		}
		for _, tok := range Tokens(query) {
			if tok == "" || tok != strings.ToLower(tok) {
				t.Fatalf("token %q", tok)
			}
		}
		if p := displayPath(string(text)); strings.ContainsAny(p, "\n\r") {
			t.Fatalf("display path %q holds a line break", p)
		}
	})
}
