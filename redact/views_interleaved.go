package redact

// The interleaved view: a value whose characters are separated by one
// same string of 1 to 4 bytes (`sed 's/./&-/g'`, `fold -w1 | paste -sd,`,
// `grep -o . | tr '\n' '|'`, Python's list of a string's characters
// "['X', 'k', …]") read as its characters alone, fed to the squeezed
// automaton (as is, reversed, base64 and base32, any case). A separator
// is made of bytes that are no letter or digit, one of them at least no
// white space (white space alone is the squeezed view's). The runs are
// found by sampling: every interleaveStep bytes, a byte of three in a row
// that may be a separator and is the same k and 2k bytes on; a run of fewer than
// MinLen characters is not read. Text with no such run costs a few
// table looks a sample.

// Three bytes in a row are looked at each interleaveStep bytes. A run of
// MinLen characters at stride k has a separator's byte that is no white
// space at q, q+k, …, q+6k: the first five of those (each the same byte
// k and 2k bytes on) fall on at least one sample's three bytes for every
// k and q when the step is 9 at most (TestInterleavedEveryPhase tries
// each place of such a byte at each offset; at 11 it misses runs).
const (
	interleaveStep = 9
	maxSepLen      = 4
)

// sepByte is true for a byte a separator may hold.
var sepByte = func() (t [256]bool) {
	for c := range 128 {
		b := byte(c)
		t[c] = !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9') && b != '\n' && b >= ' '
	}
	t['\t'] = true
	return t
}()

// markByte is 1 for a byte of sepByte that is no white space; mark80
// is 0x80 for it.
var markByte, mark80 = func() (t, t80 [256]uint8) {
	for c := range 256 {
		if sepByte[c] && !isSpace(byte(c)) {
			t[c], t80[c] = 1, 0x80
		}
	}
	return t, t80
}()

// scanInterleaved adds to spans the needles of a (the squeezed
// automaton) found in s's interleaved runs; each span is the run's raw
// bytes from the needle's first character to its last.
func scanInterleaved(a *automaton, s string, spans []span) []span {
	if a == nil || len(s) < 2*MinLen-1 {
		return spans
	}
	var done [maxSepLen + 2]int // where the last run read at stride k ends
	p := 0
	for ; p+8 <= len(s); p += interleaveStep {
		b := s[p : p+8] // (one bounds check: the loads below are one)
		m := uint64(mark80[b[0]]) | uint64(mark80[b[1]])<<8 | uint64(mark80[b[2]])<<16
		if m == 0 {
			continue // (most samples: a separator has a byte that is no white space)
		}
		// and the same byte k bytes on, for a k (a separator's length
		// + 1): eight bytes at once (base64's '+' and '/' pass the
		// test above, one sample in eleven, and seldom this one)
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if m&(zeroBytes(x^x>>16)|zeroBytes(x^x>>24)|zeroBytes(x^x>>32)|zeroBytes(x^x>>40)) != 0 {
			spans = interleavedAt(a, s, p, &done, spans)
		}
	}
	for ; p+2 < len(s); p += interleaveStep {
		spans = interleavedAt(a, s, p, &done, spans)
	}
	return spans
}

// zeroBytes has 0x80 in each byte of x that is 0, and maybe in a byte
// above one that is 0 (the borrow): never none where one is.
func zeroBytes(x uint64) uint64 {
	return (x - 0x0101010101010101) &^ x & 0x8080808080808080
}

// interleavedAt reads the runs through the sample of three bytes at p
// (done: where the last run read at each stride ends).
func interleavedAt(a *automaton, s string, p int, done *[maxSepLen + 2]int, spans []span) []span {
	for q := p; q <= p+2; q++ {
		c := s[q]
		if markByte[c] == 0 {
			continue
		}
		for k := 2; k <= maxSepLen+1; k++ {
			if q+2*k >= len(s) || s[q+k] != c || s[q+2*k] != c || q <= done[k] && done[k] > 0 {
				continue
			}
			from, to, ok := interleavedRun(s, q, k)
			if !ok || (to-from)/k+1 < MinLen {
				continue // (a separator may be a value's character: "0_>_>_>_0")
			}
			done[k] = to
			f := newFeeder(a, spans)
			for i := from; i <= to; i += k {
				if !sqOut(s[i]) {
					f.feed(s[i], i, i+1)
				}
			}
			spans = f.spans
		}
	}
	return spans
}

// interleavedRun is the longest run at stride k through the separator
// byte s[q] (or with s[q] a character, next to such a byte): the raw
// offsets of its first and last characters.
func interleavedRun(s string, q, k int) (from, to int, ok bool) {
	for v := q - k + 1; v <= q+1 && v+2*k <= len(s); v++ {
		if v < 0 {
			continue
		}
		sep := s[v+1 : v+k]
		if !separator(sep) || s[v+1+k:v+2*k] != sep {
			continue
		}
		f, t := v, v
		for f-k >= 0 && s[f-k+1:f] == sep {
			f -= k
		}
		for t+k < len(s) && s[t+1:t+k] == sep {
			t += k
		}
		if !ok || t-f > to-from {
			from, to, ok = f, t, true
		}
	}
	return from, to, ok
}

// separator reports whether sep may stand between a value's characters:
// sepBytes, not white space alone.
func separator(sep string) bool {
	visible := false
	for i := 0; i < len(sep); i++ {
		if !sepByte[sep[i]] {
			return false
		}
		visible = visible || !isSpace(sep[i])
	}
	return visible
}
