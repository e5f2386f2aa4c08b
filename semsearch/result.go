package semsearch

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Skipped returns what the search left out: reason → count.
func (r *Result) Skipped() map[string]int {
	out := map[string]int{}
	for k, v := range r.skips.n {
		out[k] = v
	}
	return out
}

// Text is the result as the model reads it: one line saying how passages
// were ranked, the hits as FILE:START-END, score and snippet, and what
// was skipped.
func (r *Result) Text() string {
	var b strings.Builder
	switch r.Mode {
	case "embeddings":
		fmt.Fprintf(&b, "Ranked by embeddings (%s): %d passages of %d files; %d files embedded now, %d from the cache.\n",
			r.Model, r.Chunks, r.Files, r.Embedded, r.Cached)
	default:
		fmt.Fprintf(&b, "Ranked lexically (BM25), not by meaning: %s. %d passages of %d files.\n", r.Notes[0], r.Chunks, r.Files)
	}
	notes := r.Notes
	if r.Mode != "embeddings" && len(notes) > 0 {
		notes = notes[1:]
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	if len(r.Hits) == 0 {
		b.WriteString("No passage matches.\n")
	}
	for i, h := range r.Hits {
		fmt.Fprintf(&b, "\n%d. %s:%d-%d score %.3f\n", i+1, displayPath(h.Path), h.Start, h.End, h.Score)
		for _, l := range strings.Split(h.Snippet, "\n") {
			fmt.Fprintf(&b, "   %s\n", l)
		}
	}
	if len(r.skips.order) > 0 {
		b.WriteString("\nSkipped:")
		for _, why := range r.skips.order {
			ex := make([]string, 0, len(r.skips.ex[why]))
			for _, p := range r.skips.ex[why] {
				ex = append(ex, displayPath(p))
			}
			more := ""
			if n := r.skips.n[why]; n > len(ex) {
				more = fmt.Sprintf(", … %d more", n-len(ex))
			}
			fmt.Fprintf(&b, "\n- %d %s: %s%s", r.skips.n[why], why, strings.Join(ex, ", "), more)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// displayPath quotes a path holding control characters or spaces at its
// ends, so a hostile file name cannot forge lines of the result.
func displayPath(p string) string {
	for _, c := range p {
		if !unicode.IsPrint(c) && c != ' ' || c == unicode.ReplacementChar {
			return strconv.Quote(p)
		}
	}
	if strings.TrimSpace(p) != p {
		return strconv.Quote(p)
	}
	return p
}
