package redact

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// sameGates fails t unless the pair filter (scanGates) finds in text the
// lines the automaton finds (refScanGates).
func sameGates(t *testing.T, text string) {
	t.Helper()
	got, want := scanGates(text), refScanGates(text)
	if fmt.Sprint(allLines(got), got.folded) != fmt.Sprint(allLines(want), want.folded) {
		t.Fatalf("gates of %q:\n got %v %v\nwant %v %v", text, allLines(got), got.folded, allLines(want), want.folded)
	}
	if auto := scanGatesAutomaton(text); fmt.Sprint(allLines(auto), auto.folded) != fmt.Sprint(allLines(want), want.folded) {
		t.Fatalf("automaton's gates of %q differ from the reference", text)
	}
	sameWatch(t, got, text)
}

// sameWatch fails t if sc, text's gate scan, says a watched byte is not
// before an offset where text has it.
func sameWatch(t *testing.T, sc *gateScan, text string) {
	t.Helper()
	for _, c := range watchedBytes {
		if i, from := strings.IndexByte(text, c), sc.watchFrom(text, c); i >= 0 && i < from {
			t.Fatalf("%q: %q at %d, watchFrom says none before %d", text, c, i, from)
		}
	}
}

// A watched byte at each offset of a base64 run (each of the gate
// filter's three sample positions) is seen; a text holding none is known
// to hold none; and the views it stands for still find a secret there:
// URL-escaped (after '%') and in a dump's line (after ':').
func TestWatchedBytesEveryOffset(t *testing.T) {
	run := "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3"
	if sc := scanGates(run); sc.watchFrom(run, ' ') != len(run) {
		t.Fatalf("a base64 run: watchFrom %d, want %d", sc.watchFrom(run, ' '), len(run))
	}
	secret := "Zq7#Kx9Wm2R/t5+Y"
	filtered, full := filteredAndFull(secret)
	var esc strings.Builder
	for i := 0; i < len(secret); i++ {
		fmt.Fprintf(&esc, "%%%02X", secret[i])
	}
	dump := hex.Dump([]byte("ab" + secret + "cd"))
	for k := range len(run) + 1 {
		for _, c := range watchedBytes {
			sameGates(t, run[:k]+string(c)+run[k:])
		}
		for _, text := range []string{run[:k] + esc.String() + "\n" + run, run[:k] + "\n" + dump + run} {
			got, want := filtered.String(text), full.String(text)
			if got != want || !strings.Contains(got, "[REDACTED]") {
				t.Fatalf("%q: filtered %q, unfiltered %q", text, got, want)
			}
		}
	}
}

// Every gate word, in each case and at both alignments, at the text's
// start and end and on lines of their own, is found by the pair filter
// where the automaton finds it.
func TestGateFilterEveryWord(t *testing.T) {
	gateWords.once.Do(compileGates)
	for _, w := range gateWords.list {
		for _, v := range []string{w.w, strings.ToUpper(w.w), strings.ToTitle(w.w[:1]) + w.w[1:]} {
			for _, text := range []string{v, "x" + v, "x\n" + v + "\n", "ab " + v + "y", v + v, "p" + v[:len(v)-1], "\u017f" + v + "\u212a"} {
				sameGates(t, text)
			}
		}
	}
	sameGates(t, benignCorpus(t, 1<<20))
}

// FuzzGateFilter: the pair filter finds the gate lines the automaton
// finds, in random text around a gate word the fuzzer picks.
func FuzzGateFilter(f *testing.F) {
	f.Add("key=1 ", " x", uint8(0), uint8(0))
	f.Add("a\n", "?\n&", uint8(7), uint8(1))
	f.Add("\u212a", "\u017f-p", uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, prefix, suffix string, word, form uint8) {
		gateWords.once.Do(compileGates)
		w := gateWords.list[int(word)%len(gateWords.list)].w
		switch form % 3 {
		case 1:
			w = strings.ToUpper(w)
		case 2:
			w = w[:len(w)/2] + "\n" + w[len(w)/2:]
		}
		sameGates(t, prefix+w+suffix)
		sameGates(t, prefix+suffix)
	})
}

// filteredAndFull are two sets of the same values: one scanning through
// the filters, one reading every byte (scanFused).
func filteredAndFull(values ...string) (filtered, full *Set) {
	filtered, full = NewSet(), NewSet()
	full.noFilter = true
	for i, v := range values {
		filtered.Add(fmt.Sprintf("S%d", i), v, Known)
		full.Add(fmt.Sprintf("S%d", i), v, Known)
	}
	return filtered, full
}

// FuzzFilterSameAsFull: redaction through the filters gives the output
// of the unfiltered scan, on random text holding a secret (and another
// set's value) in a shape the fuzzer picks, repeated, split and dumped.
func FuzzFilterSameAsFull(f *testing.F) {
	f.Add("key=1 ", " 0x00\\x", "Zq7#Kx9Wm2R/t5+Y", uint8(0), uint8(1))
	f.Add("x", "", "correct horse battery", uint8(1), uint8(0))
	f.Add("ab\n", "cd", "0123456789abcdef", uint8(2), uint8(3))
	f.Add("abc", "é pass", "Zq7#Kx9Wm2R/t5+Y", uint8(3), uint8(2))
	f.Add("00000000: 4142 ", "  AB\n", "s3cr3t-p4ssw0rd", uint8(4), uint8(5))
	f.Fuzz(func(t *testing.T, prefix, suffix, secret string, shape, rep uint8) {
		filtered, full := filteredAndFull(secret, "sk-Zq7Kx9Wm2Rt5Yp8Lb3", "0f1e2d3c4b5a69788796a5b4")
		mid := shapeOf(secret, prefix, suffix, shape)
		var b strings.Builder
		for i := range int(rep%4) + 1 {
			b.WriteString(prefix)
			b.WriteString(mid[:len(mid)*i/4])
			b.WriteString(mid)
			b.WriteString(suffix)
		}
		text := b.String()
		if got, want := filtered.String(text), full.String(text); got != want {
			t.Fatalf("filtered differs from unfiltered on %q:\n got %q\nwant %q", text, got, want)
		}
	})
}

// shapeOf is secret in one of the shapes the scans read (prefix and
// suffix go into the dumps' and streams' bytes).
func shapeOf(secret, prefix, suffix string, shape uint8) string {
	var b strings.Builder
	switch shape % 10 {
	case 0:
		return secret
	case 1:
		for i := 0; i < len(secret); i++ {
			fmt.Fprintf(&b, "0x%02x, ", secret[i])
		}
	case 2:
		for i := 0; i < len(secret); i++ {
			fmt.Fprintf(&b, "\\x%02X", secret[i])
		}
	case 3:
		return base64.StdEncoding.EncodeToString([]byte(prefix + secret + suffix))
	case 4:
		return hex.Dump([]byte(prefix + secret + suffix))
	case 5:
		return strings.ToUpper(hex.EncodeToString([]byte(secret)))
	case 6: // folded over lines and spaces
		for i := 0; i < len(secret); i++ {
			b.WriteByte(secret[i])
			if i%3 == 2 {
				b.WriteString("\n ")
			}
		}
	case 7: // xxd -p at 7 digits a line
		for h := hex.EncodeToString([]byte(secret)); len(h) > 0; {
			n := min(7, len(h))
			b.WriteString(h[:n] + "\n")
			h = h[n:]
		}
	case 8:
		return reverse(secret)
	case 9:
		return base32.StdEncoding.EncodeToString([]byte(prefix + secret + suffix))
	}
	return b.String()
}

// On the benchmarks' corpus, with 48 secrets in their shapes, the
// filters' output is the unfiltered scan's.
func TestFilterSameAsFullOnCorpus(t *testing.T) {
	secrets := randomSecrets(48)
	filtered, full := filteredAndFull(secrets...)
	corpus := benignCorpus(t, 1<<20)
	var b strings.Builder
	for i, v := range secrets {
		b.WriteString(corpus[i*2000 : i*2000+1500])
		b.WriteString(shapeOf(v, corpus[i:i+3], corpus[i+7:i+9], uint8(i)))
	}
	for _, text := range []string{corpus, b.String()} {
		got, want := filtered.String(text), full.String(text)
		if got != want {
			t.Fatalf("filtered differs from unfiltered at %d", len(removedPart(got, want)))
		}
	}
	// (a shape next to another, or to a value the patterns hide, shares
	// its mark)
	if got := filtered.String(b.String()); strings.Count(got, "[REDACTED]") < 40 {
		t.Errorf("%d marks for 48 secrets", strings.Count(got, "[REDACTED]"))
	}
}

// Each hex needle of a value, at every offset from a sample, between
// bytes that break the hex view's runs, is found by the filter as by the
// full scan: the shortest needle ending three bytes after a sample, just
// before a break, is found by that sample alone (a skip that looks at the
// fifth byte too misses it).
func TestHexFilterEveryAlignment(t *testing.T) {
	for _, v := range []string{"Zq7#Kx9W", "s3cr3t-p4ssw0rd!", "Zq7Kx9Wm2Rt5Yp8Lb3"} {
		filtered, full := filteredAndFull(v)
		var n needles
		n.add(0, v)
		step := filtered.matcher().hxf.step
		for _, nd := range n.hex {
			for _, form := range []string{nd, strings.ToUpper(nd)} {
				for off := range 2*step + 2 {
					for _, brk := range []string{"z", ".", "\"", "g"} {
						text := strings.Repeat(brk, off) + form + brk + strings.Repeat("q", 2*step)
						got, want := filtered.String(text), full.String(text)
						if got != want {
							t.Fatalf("%q: filtered %q, unfiltered %q", text, got, want)
						}
						if strings.Contains(got, form) {
							t.Fatalf("%q: %q not hidden: %q", text, form, got)
						}
					}
				}
			}
		}
	}
}

// The squeezed filter's bitmaps, whole and folded to its distinct grams,
// hold every gram of every needle at the offsets below its step; the
// folded one is smaller when the values share their grams (48 alike
// values).
func TestSqFilterFolded(t *testing.T) {
	alike := make([]string, 48)
	for i := range alike {
		alike[i] = fmt.Sprintf("sk-Zq7Kx9Wm2Rt5Yp8Lb3-%03d", i)
	}
	sizes := map[string]int{}
	for name, values := range map[string][]string{"alike": alike, "random": randomSecrets(48)} {
		set := fullSet(values)
		var n needles
		for i, v := range values {
			n.add(i, v)
		}
		f := set.matcher().sqf
		for _, nd := range n.squeezed {
			for off := 0; off < f.step; off++ {
				h := gramHash(nd[off:off+gramLen], f.shift)
				if hs := h >> f.fold; f.grams[h>>6]&(1<<(h&63)) == 0 || f.small[hs>>6]&(1<<(hs&63)) == 0 {
					t.Fatalf("%s: gram %q of %q not in the filter", name, nd[off:off+gramLen], nd)
				}
			}
		}
		sizes[name] = len(f.small) * 64
	}
	if sizes["alike"] >= sizes["random"] || sizes["alike"] > 1<<17 {
		t.Errorf("bitmap bits: %v", sizes)
	}
}

// On a text with no dump's line (no ' ' or ':'), each value as it is,
// in hex and in base64, at every offset from a sample of either view's
// filter, is found as by the full scan (values of 8 and 40 bytes: the
// two filters' steps differ).
func TestPlainFilterEveryAlignment(t *testing.T) {
	values := []string{"Zq7#Kx9W", "s3cr3t-p4ssw0rd!Zq7Kx9Wm2Rt5Yp8Lb3-00017"}
	filtered, full := filteredAndFull(values...)
	m := filtered.matcher()
	if m.sqf.step == m.hxf.step {
		t.Fatalf("steps %d and %d", m.sqf.step, m.hxf.step)
	}
	steps := max(m.sqf.step, m.hxf.step)
	for _, v := range values {
		forms := []string{v, hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v)))}
		for _, pre := range []string{"", "a", "ab"} {
			forms = append(forms, base64.StdEncoding.EncodeToString([]byte(pre+v)))
		}
		for _, form := range forms {
			for off := range steps + 2 {
				for _, brk := range []string{"\n", "\"", "z"} {
					text := strings.Repeat("~", off) + brk + form + brk + strings.Repeat("~", steps)
					got, want := filtered.String(text), full.String(text)
					if got != want || strings.Contains(got, form) {
						t.Fatalf("%q: filtered %q, unfiltered %q", text, got, want)
					}
				}
			}
		}
	}
}

// allLines is sc's lines of every gate word (linesOf), for comparing
// scans: a scan that found no word has none made.
func allLines(sc *gateScan) [][]int {
	l := make([][]int, len(gateWords.list))
	for id := range l {
		l[id] = sc.linesOf(id)
	}
	return l
}
