package semsearch

import (
	"bytes"
	"unicode/utf8"
)

// Chunk sizes: a passage is ChunkLines lines, and the next one starts
// ChunkLines-ChunkOverlap lines later, so a passage cut at a boundary is
// whole in its neighbour.
const (
	ChunkLines   = 30
	ChunkOverlap = 10
	// MaxChunkBytes bounds one passage's text (a minified file is one
	// huge line): what is ranked and embedded is its head.
	MaxChunkBytes = 4 << 10
)

// Chunk is a passage: lines Start..End (1-based, inclusive) of a file.
type Chunk struct {
	Start, End int
	Text       string
}

// Split cuts text into chunks of size lines, each overlapping the previous
// one by overlap lines (0 <= overlap < size, else the defaults). A chunk's
// text is at most MaxChunkBytes, cut at a rune boundary. A text with no
// non-blank line has no chunks; a chunk of blank lines only is dropped.
func Split(text []byte, size, overlap int) []Chunk {
	if size <= 0 || overlap < 0 || overlap >= size {
		size, overlap = ChunkLines, ChunkOverlap
	}
	lines := splitLines(text)
	var out []Chunk
	step := size - overlap
	for start := 0; start < len(lines); start += step {
		end := min(start+size, len(lines))
		body := bytes.Join(lines[start:end], []byte{'\n'})
		if len(bytes.TrimSpace(body)) > 0 {
			out = append(out, Chunk{Start: start + 1, End: end, Text: clip(body, MaxChunkBytes)})
		}
		if end == len(lines) {
			break
		}
	}
	return out
}

// splitLines splits text at '\n' (a "\r\n" loses its '\r'); a final
// newline does not start an empty last line.
func splitLines(text []byte) [][]byte {
	if len(text) == 0 {
		return nil
	}
	text = bytes.TrimSuffix(text, []byte{'\n'})
	lines := bytes.Split(text, []byte{'\n'})
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte{'\r'})
	}
	return lines
}

// clip returns b as a string of at most n bytes, cut at a rune boundary.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n-- // b[n] continues the rune that b[:n] would cut
	}
	return string(b[:n])
}
