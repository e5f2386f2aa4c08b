package semsearch

import (
	"math"
	"strings"
	"unicode"
)

// BM25 parameters (the usual ones).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Tokens splits s into lower-case words of letters and digits. An
// identifier joined by '_', '-' or '.' gives its parts and the whole
// (max_connections → max, connections, max_connections), so a query may
// name either.
func Tokens(s string) []string {
	var out []string
	for _, word := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
	}) {
		word = strings.Trim(strings.ToLower(word), "_-.")
		if word == "" {
			continue
		}
		parts := strings.FieldsFunc(word, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
		out = append(out, parts...)
		if len(parts) > 1 {
			out = append(out, word)
		}
	}
	return out
}

// BM25 scores each document against the query with Okapi BM25 over
// Tokens; a document sharing no term with the query scores 0.
func BM25(query string, docs []string) []float64 {
	scores := make([]float64, len(docs))
	terms := unique(Tokens(query))
	if len(terms) == 0 || len(docs) == 0 {
		return scores
	}
	tf := make([]map[string]int, len(docs))
	df := map[string]int{}
	lens := make([]int, len(docs))
	total := 0
	for i, d := range docs {
		toks := Tokens(d)
		lens[i] = len(toks)
		total += len(toks)
		tf[i] = map[string]int{}
		for _, t := range toks {
			tf[i][t]++
		}
		for _, t := range terms {
			if tf[i][t] > 0 {
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(len(docs))
	if avg == 0 {
		return scores
	}
	n := float64(len(docs))
	for i := range docs {
		for _, t := range terms {
			f := float64(tf[i][t])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			scores[i] += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(lens[i])/avg))
		}
	}
	return scores
}

func unique(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Cosine is the cosine similarity of a and b (0 when either is zero or
// their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
