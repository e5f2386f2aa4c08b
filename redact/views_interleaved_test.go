package redact

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// refScanInterleaved is scanInterleaved as it was first written: a
// sample every 7 bytes, each with a separator's byte looked at byte by
// byte (interleavedAt), no word-at-once test first. scanInterleaved
// must find the same spans.
func refScanInterleaved(a *automaton, s string, spans []span) []span {
	if a == nil || len(s) < 2*MinLen-1 {
		return spans
	}
	var done [maxSepLen + 2]int
	for p := 0; p+2 < len(s); p += 7 {
		spans = interleavedAt(a, s, p, &done, spans)
	}
	return spans
}

// interleavedSeps is every separator of 1 to maxSepLen bytes of space,
// hyphen and quote that is not white space alone: a separator's byte that
// is no white space at each place in it.
func interleavedSeps() []string {
	seps := []string{""}
	var out []string
	for range maxSepLen {
		var next []string
		for _, p := range seps {
			for _, c := range " -'" {
				sep := p + string(c)
				next = append(next, sep)
				if strings.TrimSpace(sep) != "" {
					out = append(out, sep)
				}
			}
		}
		seps = next
	}
	return out
}

// A value of MinLen characters with a separator between them is found
// with every separator (each place of its visible byte), at every offset
// of the samples, whatever comes after it, and as the reference finds it.
func TestInterleavedEveryPhase(t *testing.T) {
	const value = "Qx7Kp2Wz"
	set := NewSet()
	set.Add("S", value, Known)
	a := set.matcher().squeezed
	n := 0
	for _, sep := range interleavedSeps() {
		var b strings.Builder
		for i := range len(value) {
			b.WriteByte(value[i])
			if i < len(value)-1 {
				b.WriteString(sep)
			}
		}
		run := b.String()
		for off := range 2 * (interleaveStep + 2*maxSepLen + 2) {
			for _, tail := range []string{"", sep, " end of line\n", "ABCDEFGHIJKLMNOP"} {
				text := strings.Repeat("z", off) + run + tail
				got := scanInterleaved(a, text, nil)
				if !slices.ContainsFunc(got, func(sp span) bool { return text[sp.from:sp.to] == run }) {
					t.Fatalf("sep %q, offset %d, tail %q: %q not found: %v", sep, off, tail, text, got)
				}
				if want := refScanInterleaved(a, text, nil); !slices.Equal(got, want) {
					t.Fatalf("sep %q, offset %d: spans %v, the reference's %v", sep, off, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d texts", n)
}

// FuzzInterleavedSameAsReference: scanInterleaved finds what the
// reference finds in random text around a value with separators.
func FuzzInterleavedSameAsReference(f *testing.F) {
	f.Add("pre ", " post", "Zq7Kx9Wm2Rt5", "-", uint8(0))
	f.Add("+/+/", "//++", "Zq7Kx9Wm2Rt5", "', '", uint8(3))
	f.Add("a-b-c-d-", "x", "SqliteKv-2208bh111", "::", uint8(1))
	f.Add("", "", "0-0-0-0-0-0-0-0-0", "-", uint8(2))
	set := NewSet()
	set.Add("S", "Zq7Kx9Wm2Rt5", Known)
	set.Add("T", "SqliteKv-2208bh111", Known)
	set.Add("U", "0-0-0-0-0-0-0-0-0", Known)
	a := set.matcher().squeezed
	f.Fuzz(func(t *testing.T, prefix, suffix, value, sep string, cut uint8) {
		if len(sep) > maxSepLen {
			sep = sep[:maxSepLen]
		}
		var b strings.Builder
		for i := range len(value) {
			b.WriteByte(value[i])
			b.WriteString(sep)
		}
		mid := b.String()
		mid = mid[:len(mid)-int(cut)%max(len(mid), 1)]
		text := prefix + mid + suffix
		got := scanInterleaved(a, text, nil)
		want := refScanInterleaved(a, text, nil)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: spans %v, the reference's %v", text, got, want)
		}
	})
}
