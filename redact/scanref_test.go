package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The scans as they were before scanAll (one loop a view, branches on
// each byte's role), kept as the reference scanAll must agree with.

// refSpans is every span the set's views find in s, by the reference
// scans.
func refSpans(m *matcher, s string) []span {
	var spans []span
	spans = refScanSqueezed(m.squeezed, s, spans)
	if m.squeezed != nil && refDecodable(s) {
		spans = scanDecoded(m.squeezed, s, true, nil, spans)
	}
	if m.hex != nil {
		spans = refScanHex(m.hex, s, spans)
	}
	return spans
}

// refScanGates is scanGates as it was: a loop of its own.
func refScanGates(s string) *gateScan {
	g := &gateWords
	g.once.Do(compileGates)
	sc := &gateScan{src: s, lines: make([][]int, len(g.list))}
	next, class, stride := g.next, &g.class, g.stride
	off, ls := int32(0), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			ls = i + 1
		}
		off = next[off+int32(class[c])]
		if off >= 0 {
			continue
		}
		off &^= matchBit
		for _, id := range g.out[off/stride] {
			w := g.list[id]
			if !w.fold && s[i+1-len(w.w):i+1] != w.w {
				continue
			}
			if l := sc.lines[id]; len(l) == 0 || l[len(l)-1] != ls {
				sc.lines[id] = append(l, ls)
			}
		}
	}
	lines(s, func(at, end int) {
		if strings.Contains(s[at:end], "\u017f") || strings.Contains(s[at:end], "\u212a") {
			sc.folded = append(sc.folded, at)
		}
	})
	return sc
}

// refDecodable is the reference's test for running the decoded view.
func refDecodable(s string) bool {
	if escaped(s, nil) {
		return true
	}
	dump := false
	lines(s, func(at, end int) {
		if !dump {
			dump, _, _, _, _ = dumpLine(s, at, end)
		}
	})
	return dump
}

// refScanSqueezed runs sq over the squeezed view, branching on white
// space. Where a needle ends, matched walks back to where it began.
func refScanSqueezed(sq *automaton, s string, spans []span) []span {
	if sq == nil {
		return spans
	}
	off := int32(0)
	for j := 0; j < len(s); j++ {
		if x := sq.squeezedTr[s[j]]; x >= 0 {
			off = sq.next[off+int32(x)]
			if off < 0 {
				off &^= matchBit
				spans = sq.matched(&sq.squeezedTr, s, j, off, spans)
			}
		}
	}
	return spans
}

// refScanHex runs a over the hex view: each line's hex columns (a dump's) or
// the whole line, hex digits in lower case, separators, "0x" and "\x"
// left out, anything else breaking a run; one table lookup a byte.
func refScanHex(a *automaton, s string, spans []span) []span {
	size := 1
	for size < a.maxLen+1 {
		size <<= 1
	}
	ring, mask := make([]int32, size), size-1
	next, tr, nc := a.next, &a.hexTr, a.stride
	off, n := int32(0), 0
	for at := 0; at < len(s); { // each line, not through lines: the loop's variables stay in registers
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		_, from, to, _, _ := dumpLine(s, at, end)
		at = end + 1
		for j := from; j < to; j++ {
			c := s[j]
			x := tr[c]
			switch {
			case x == skipByte:
				continue
			case x == breakByte:
				off = 0
				continue
			case x == prefixByte || c == '0':
				if j+2 < to && (s[j+1] == 'x' || c == '0' && s[j+1] == 'X') && isHex(s[j+2]) {
					j++ // 0x, \x
					continue
				}
				if x == prefixByte {
					off = 0
					continue
				}
			}
			off = next[off+int32(x)]
			ring[n&mask] = int32(j)
			n++
			if off < 0 {
				off &^= matchBit
				st := off / nc
				spans = append(spans, span{from: int(ring[(n-int(a.best[st]))&mask]), to: j + 1, secret: int(a.secret[st])})
			}
		}
	}
	return spans
}

// sameScan fails t unless scanAll finds in text what the reference
// scans find: the same spans and the same gate lines. It returns how
// many spans.
func sameScan(t *testing.T, set *Set, text string) int {
	t.Helper()
	m := set.matcher()
	r := scanAll(text, m, true)
	got := r.spans
	if m.squeezed != nil {
		got = scanDecoded(m.squeezed, text, r.dump, r.gates, got)
	}
	want := refSpans(m, text)
	order := func(a, b span) int {
		if a.from != b.from {
			return a.from - b.from
		}
		if a.to != b.to {
			return a.to - b.to
		}
		return a.secret - b.secret
	}
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Fatalf("spans of %q:\n got %v\nwant %v", text, got, want)
	}
	ref := refScanGates(text)
	if fmt.Sprint(allLines(r.gates), r.gates.folded) != fmt.Sprint(allLines(ref), ref.folded) {
		t.Fatalf("gates of %q:\n got %v %v\nwant %v %v", text, allLines(r.gates), r.gates.folded, allLines(ref), ref.folded)
	}
	// the unfiltered pass too
	fr := scanFused(text, m)
	full := fr.spans
	if m.squeezed != nil {
		full = scanDecoded(m.squeezed, text, fr.dump, fr.gates, full)
	}
	slices.SortFunc(full, order)
	if !slices.Equal(full, want) {
		t.Fatalf("unfiltered spans of %q:\n got %v\nwant %v", text, full, want)
	}
	if fmt.Sprint(allLines(fr.gates), fr.gates.folded) != fmt.Sprint(allLines(ref), ref.folded) {
		t.Fatalf("unfiltered gates of %q differ", text)
	}
	return len(got)
}

// FuzzScanSameAsReference: scanAll and the reference scans find the same
// spans and gate lines, in random text holding a secret in a shape the
// fuzzer picks (its hex with prefixes and separators, its base64, dumps).
func FuzzScanSameAsReference(f *testing.F) {
	f.Add("key=1 ", " 0x00\\x", "Zq7#Kx9Wm2R/t5+Y", uint8(0))
	f.Add("x", "", "correct horse battery", uint8(1))
	f.Add("ab\n", "cd", "0123456789abcdef", uint8(2))
	f.Add("abc", "é pass", "Zq7#Kx9Wm2R/t5+Y", uint8(3))
	f.Add("00000000: 4142 ", "  AB\n", "s3cr3t-p4ssw0rd", uint8(4))
	f.Fuzz(func(t *testing.T, prefix, suffix, secret string, shape uint8) {
		set := NewSet()
		set.Add("S", secret, Known)
		set.Add("T", "sk-Zq7Kx9Wm2Rt5Yp8Lb3", Known)
		var mid string
		switch shape % 6 {
		case 0:
			mid = secret
		case 1:
			var b strings.Builder
			for i := 0; i < len(secret); i++ {
				fmt.Fprintf(&b, "0x%02x, ", secret[i])
			}
			mid = b.String()
		case 2:
			var b strings.Builder
			for i := 0; i < len(secret); i++ {
				fmt.Fprintf(&b, "\\x%02X", secret[i])
			}
			mid = b.String()
		case 3:
			mid = base64.StdEncoding.EncodeToString([]byte(secret))
		case 4:
			mid = hex.Dump([]byte(prefix + secret + suffix))
		case 5:
			mid = strings.ToUpper(hex.EncodeToString([]byte(secret)))
		}
		if set.Len() == 0 {
			return
		}
		sameScan(t, set, prefix+mid+suffix)
	})
}

// On the benchmarks' texts, scanAll finds what the reference scans find.
func TestScanSameAsReferenceOnCorpus(t *testing.T) {
	set := fullSet(randomSecrets(48))
	corpus := benignCorpus(t, 1<<20)
	sameScan(t, set, corpus)
	// and with the secrets in it, in their shapes
	var b strings.Builder
	for i, v := range randomSecrets(48) {
		b.WriteString(corpus[i*1000 : i*1000+500])
		switch i % 5 {
		case 4: // xxd -p, wrapped at 15 digits
			for h := hex.EncodeToString([]byte(v)); len(h) > 0; {
				n := min(15, len(h))
				b.WriteString(h[:n] + "\n")
				h = h[n:]
			}
		case 0:
			b.WriteString(v)
		case 1:
			b.WriteString(hex.Dump([]byte(v)))
		case 2:
			b.WriteString(base64.StdEncoding.EncodeToString([]byte("xy" + v)))
		case 3:
			fmt.Fprintf(&b, "%X", v)
		}
	}
	if n := sameScan(t, set, b.String()); n < 48 {
		t.Errorf("%d spans for 48 secrets", n)
	}
}

// After byLines changed a large text in parts, the scan it spliced (the
// old scan outside the parts, the parts scanned again) is the scan of the
// new text.
func TestSpliceSameAsScan(t *testing.T) {
	var b strings.Builder
	pad := benignCorpus(t, 64<<10)
	for i := range 40 {
		b.WriteString(pad[i*1000 : i*1000+700])
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "\nDB_PASSWORD=hunter%d2hunter\n", i)
		case 1:
			fmt.Fprintf(&b, "\n\"api_key\": \"v%dvvvvvvvv\", token=é%d\n", i, i)
		case 2:
			fmt.Fprintf(&b, "\ncurl https://u:p%dpppp@h/x?key=%d&x=1\n", i, i)
		case 3:
			b.WriteString("\nnothing here\n")
		}
	}
	text := b.String()
	g := newRedactGate(text)
	mark := func(name, _ string) string { return NamedMark(MarkName(name)) }
	out := text
	for _, step := range []struct {
		gate lineGate
		re   *regexp.Regexp
	}{{foldWords(assignWords...), assignRE}, {words("://"), userinfoRE}, {words("?", "&"), queryRE}} {
		out = g.byLines(out, step.gate, func(s string) string { return replaceValues(s, step.re, "", mark, keyName) })
		want := scanGates(out)
		got := g.cur.scan
		if got.src != out {
			t.Fatal("byLines left no scan of its text")
		}
		if fmt.Sprint(allLines(got), got.folded) != fmt.Sprint(allLines(want), want.folded) {
			t.Fatalf("spliced scan differs from a new scan:\n got %v %v\nwant %v %v", allLines(got), got.folded, allLines(want), want.folded)
		}
	}
	if out == text {
		t.Fatal("the patterns changed nothing")
	}
}
