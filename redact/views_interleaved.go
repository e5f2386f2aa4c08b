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

// Three bytes in a row are looked at each interleaveStep bytes: a
// separator's bytes that are no white space are among any three in a row
// of a run; the step is odd, so that the samples fall on each phase of a
// run of any stride; a run of MinLen characters holds two samples at
// least.
const (
	interleaveStep = 7
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

// markByte is 1 for a byte of sepByte that is no white space.
var markByte = func() (t [256]uint8) {
	for c := range 256 {
		if sepByte[c] && !isSpace(byte(c)) {
			t[c] = 1
		}
	}
	return t
}()

// scanInterleaved adds to spans the needles of a (the squeezed
// automaton) found in s's interleaved runs; each span is the run's raw
// bytes from the needle's first character to its last.
func scanInterleaved(a *automaton, s string, spans []span) []span {
	if a == nil || len(s) < 2*MinLen-1 {
		return spans
	}
	var done [maxSepLen + 2]int // where the last run read at stride k ends
	for p := 0; p+2 < len(s); p += interleaveStep {
		if markByte[s[p]]|markByte[s[p+1]]|markByte[s[p+2]] == 0 {
			continue // (most samples: a separator has a byte that is no white space)
		}
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
