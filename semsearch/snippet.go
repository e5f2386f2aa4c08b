package semsearch

import (
	"context"
	"fmt"
	"strings"
)

// Snippet bounds: the lines of a passage shown, and the bytes of each.
const (
	snippetLines     = 8
	snippetLineBytes = 160
)

// snippets fills each hit's Snippet from its passage, reading the files
// whose passages came from the cache. A file that cannot be read now gets
// a snippet saying so.
func (r *reader) snippets(ctx context.Context, hits []Hit, query string) {
	terms := map[string]bool{}
	for _, t := range Tokens(query) {
		terms[t] = true
	}
	for i := range hits {
		h := &hits[i]
		r.mu.Lock()
		chunks, ok := r.texts[h.Path]
		r.mu.Unlock()
		if !ok {
			var skip string
			var err error
			chunks, skip, err = r.read(ctx, candidate{path: h.Path})
			switch {
			case err != nil:
				h.Snippet = "(unreadable now: " + reason(err) + ")"
				continue
			case skip != "":
				h.Snippet = "(" + skip + " now)"
				continue
			}
		}
		h.Snippet = "(changed since it was indexed)"
		for _, c := range chunks {
			if c.Start == h.Start && c.End == h.End {
				h.Snippet = bestLines(c, terms)
				break
			}
		}
	}
}

// bestLines returns up to snippetLines lines of c, the window holding the
// most query terms (the first lines when none), each clipped, prefixed by
// its line number.
func bestLines(c Chunk, terms map[string]bool) string {
	lines := strings.Split(c.Text, "\n")
	best, bestN := 0, -1
	for start := 0; start == 0 || start+snippetLines <= len(lines); start++ {
		n := 0
		for _, l := range lines[start:min(start+snippetLines, len(lines))] {
			for _, t := range Tokens(l) {
				if terms[t] {
					n++
				}
			}
		}
		if n > bestN {
			best, bestN = start, n
		}
	}
	var b strings.Builder
	for i, l := range lines[best:min(best+snippetLines, len(lines))] {
		if len(l) > snippetLineBytes {
			l = clip([]byte(l), snippetLineBytes) + "…"
		}
		fmt.Fprintf(&b, "%d: %s\n", c.Start+best+i, strings.ToValidUTF8(l, "?"))
	}
	return strings.TrimRight(b.String(), "\n")
}
