package engine

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/redact"
)

// streamSecret is a Known value of the tests' sets (an API key's shape).
const streamSecret = "sk-Tq4Lm9Wx2Zr7Pv3Nb8Kd"

// streamShapes are shapes of a value over several lines, as commands
// write them: fold -wN, base64 -wN, one character a line, hex bytes
// with spaces (xxd -p -c4 | sed 's/../& /g').
var streamShapes = []func(v string, w int) string{
	func(v string, w int) string { return wrap(v, w) },
	func(v string, w int) string { return wrap(base64.StdEncoding.EncodeToString([]byte(v)), w) },
	func(v string, w int) string { return wrap(v, 1) },
	func(v string, w int) string {
		h := hex.EncodeToString([]byte(v))
		var b strings.Builder
		for i := 0; i < len(h); i += 2 {
			b.WriteString(h[i : i+2])
			if (i/2+1)%w == 0 {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		return b.String() + "\n"
	},
}

func wrap(s string, w int) string {
	var b strings.Builder
	for len(s) > w {
		b.WriteString(s[:w] + "\n")
		s = s[w:]
	}
	return b.String() + s + "\n"
}

// streamRun passes text to a streamScrub cut into pieces at cuts (as the
// executor sends them), then a step event, and returns the output
// events' data joined and how many output events there were.
func streamRun(t testing.TB, set *redact.Set, text string, cuts []int) (string, int) {
	sc := &streamScrub{r: Redactor{Set: set}}
	var got strings.Builder
	n := 0
	out := func(ev event.Event) {
		if ev.Kind == event.KindOutput {
			if ev.Output.Phase != 1 || ev.Output.Step != 2 || ev.Output.Stream != "stdout" || ev.Host != "h" {
				t.Fatalf("output event %+v", ev)
			}
			got.WriteString(ev.Output.Data)
			n++
		}
	}
	last := 0
	for _, c := range append(cuts, len(text)) {
		if c <= last || c > len(text) {
			continue
		}
		sc.pass(event.Event{Kind: event.KindOutput, Host: "h", Output: &event.Output{Phase: 1, Step: 2, Stream: "stdout", Data: text[last:c]}}, out)
		last = c
	}
	sc.pass(event.Event{Kind: event.KindStep, Host: "h", Step: &event.Step{Phase: 1, Step: 2}}, out)
	if len(sc.held) != 0 {
		t.Fatalf("%d streams still held after the step", len(sc.held))
	}
	return got.String(), n
}

func streamSet() *redact.Set {
	set := redact.NewSet()
	set.Add("OPENAI_API_KEY", streamSecret, redact.Known)
	return set
}

// leaksSecret reports whether text shows an 8-byte window of the secret,
// of its base64 or of its hex, once white space is gone.
func leaksSecret(text, secret string) bool {
	flat := strings.Join(strings.Fields(text), "")
	hexFlat := strings.ReplaceAll(flat, " ", "")
	for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), hex.EncodeToString([]byte(secret))} {
		for i := 0; i+8 <= len(form); i++ {
			if strings.Contains(flat, form[i:i+8]) || strings.Contains(hexFlat, form[i:i+8]) {
				return true
			}
		}
	}
	return false
}

// TestStreamHidesShapeOverEvents: a shape over lines whose lines went out
// in different output events (each line its own, as a slow command's)
// is hidden, and so is one a large piece's end cuts; every other line is
// kept, in order. Each piece redacted on its own (as before) shows the
// secret.
func TestStreamHidesShapeOverEvents(t *testing.T) {
	set := streamSet()
	for i, shape := range streamShapes {
		for _, w := range []int{1, 3, 4, 7} {
			var before, after strings.Builder
			for j := range 200 {
				fmt.Fprintf(&before, "before line %d of the output\n", j)
				fmt.Fprintf(&after, "after line %d of the output\n", j)
			}
			body := shape(streamSecret, w)
			text := before.String() + body + after.String()
			// each line its own event
			var lines []int
			for j, c := range text {
				if c == '\n' {
					lines = append(lines, j+1)
				}
			}
			// a big piece's end in the middle of the shape
			mid := len(before.String()) + strings.Index(body[len(body)/2:], "\n") + len(body)/2 + 1
			for name, cuts := range map[string][]int{"lines": lines, "mid": {mid}} {
				got, n := streamRun(t, set, text, cuts)
				if leaksSecret(got, streamSecret) {
					t.Errorf("shape %d w%d %s: the events show the secret:\n%s", i, w, name, got[len(before.String())-100:][:min(len(body)+300, len(got)-len(before.String())+100)])
				}
				if !strings.HasPrefix(got, before.String()) || !strings.HasSuffix(got, after.String()) {
					t.Errorf("shape %d w%d %s: lines lost", i, w, name)
				}
				if name == "lines" && n < 2 {
					t.Errorf("shape %d w%d: %d output events: the stream is not sent as it comes", i, w, n)
				}
				// the check fails without the stream's redactor
				var one strings.Builder
				last := 0
				for _, c := range append(cuts, len(text)) {
					one.WriteString(set.String(text[last:c]))
					last = c
				}
				if name == "lines" && !leaksSecret(one.String(), streamSecret) {
					t.Errorf("shape %d w%d: redacted piece by piece, no leak: the test shows nothing", i, w)
				}
			}
		}
	}
}

// TestStreamHoldsOnlyItsSpan: what a stream holds is its last lines, at
// most holdSpan bytes beyond the line that holds the cut; the lines
// before go out as they come, redacted.
func TestStreamHoldsOnlyItsSpan(t *testing.T) {
	set := streamSet()
	sc := &streamScrub{r: Redactor{Set: set}}
	span := holdSpan(set.Longest())
	var sent strings.Builder
	out := func(ev event.Event) { sent.WriteString(ev.Output.Data) }
	var all strings.Builder
	for j := range 500 {
		line := fmt.Sprintf("line %d token=%s\n", j, streamSecret)
		all.WriteString(line)
		sc.pass(event.Event{Kind: event.KindOutput, Output: &event.Output{Stream: "stdout", Data: line}}, out)
		if len(sc.held) != 1 {
			t.Fatalf("line %d: %d streams held", j, len(sc.held))
		}
		if held := len(sc.held[0].text); held > span+len(line) {
			t.Fatalf("line %d: %d bytes held, span %d", j, len(sc.held[0].text), span)
		}
	}
	if strings.Contains(sent.String(), streamSecret) {
		t.Fatal("a line's secret sent")
	}
	if want := strings.Count(set.String(all.String()), "\n") - strings.Count(sc.held[0].text, "\n"); strings.Count(sent.String(), "\n") != want {
		t.Fatalf("%d lines sent, want %d", strings.Count(sent.String(), "\n"), want)
	}
	// a PEM block over the cut: held until its END line, hidden whole
	sc = &streamScrub{r: Redactor{Set: set}}
	sent.Reset()
	key := "-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n", 40) + "-----END PRIVATE KEY-----\n"
	text := strings.Repeat("filler line before the key\n", 100) + key + strings.Repeat("filler line after the key\n", 100)
	for l := range strings.Lines(text) {
		sc.pass(event.Event{Kind: event.KindOutput, Output: &event.Output{Stream: "stdout", Data: l}}, out)
	}
	sc.pass(event.Event{Kind: event.KindDone, Done: &event.Done{}}, func(ev event.Event) {
		if ev.Kind == event.KindOutput {
			out(ev)
		}
	})
	if strings.Contains(sent.String(), "MIIEvQIBADANBgkq") {
		t.Fatalf("the key's lines sent:\n%s", sent.String())
	}
	if strings.Count(sent.String(), "filler line") != 200 {
		t.Fatalf("filler lines lost:\n%s", sent.String())
	}
}

// FuzzStreamSplitSecret: a known secret in a random shape inside random
// lines, split at random event boundaries, never survives in the events'
// data joined, and every other line is there, in order.
func FuzzStreamSplitSecret(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(3), uint16(40), uint16(40))
	f.Add(uint64(2), uint8(1), uint8(4), uint16(0), uint16(300))
	f.Add(uint64(3), uint8(2), uint8(1), uint16(500), uint16(3))
	f.Add(uint64(4), uint8(3), uint8(5), uint16(7), uint16(0))
	set := streamSet()
	f.Fuzz(func(t *testing.T, seed uint64, shape, w uint8, nBefore, nAfter uint16) {
		r := rand.New(rand.NewPCG(seed, uint64(shape)<<8|uint64(w)))
		line := func(i int) string {
			return fmt.Sprintf("%s %d %s\n", strings.Repeat("x", r.IntN(120)), i, strings.Repeat("y", r.IntN(40)))
		}
		var before, after strings.Builder
		for i := range int(nBefore % 600) {
			before.WriteString(line(i))
		}
		for i := range int(nAfter % 600) {
			after.WriteString(line(i))
		}
		text := before.String() + streamShapes[int(shape)%len(streamShapes)](streamSecret, 1+int(w)%8) + after.String()
		var cuts []int
		for i := 0; i < len(text); i += 1 + r.IntN(600) {
			cuts = append(cuts, i)
		}
		got, _ := streamRun(t, set, text, cuts)
		if leaksSecret(got, streamSecret) {
			t.Fatalf("the events show the secret:\n%s", got)
		}
		if !strings.HasPrefix(got, before.String()) || !strings.HasSuffix(got, after.String()) {
			t.Fatalf("lines lost")
		}
	})
}

// BenchmarkOutputEvents: a step's 768 KiB of random bytes' base64 (1 MiB)
// as the executor sends it, in 32 KiB pieces or one line a piece (a slow
// command's), through the events' redaction: each piece on its own
// (Redactor.Event, before) and by stream (streamScrub). The lines get a
// new set each round (compiled before the clock runs): a set remembers
// the short texts it redacted; of texts over 16 KiB only the last 4.
func BenchmarkOutputEvents(b *testing.B) {
	newSet := func() *redact.Set {
		set := redact.NewSet()
		for i := range 48 {
			set.Add(fmt.Sprintf("S%d", i), fmt.Sprintf("sk-Zq7Kx9Wm2Rt5Yp8Lb3-%03d", i), redact.Known)
		}
		set.String("compile")
		return set
	}
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, 786432)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	text := wrap(base64.StdEncoding.EncodeToString(raw), 76)
	for _, size := range []int{32 << 10, 0} {
		var pieces []string
		for rest := text; rest != ""; {
			n := len(rest)
			if size == 0 {
				n = strings.IndexByte(rest, '\n') + 1
			} else if n > size {
				n = strings.LastIndexByte(rest[:size], '\n') + 1
			}
			pieces, rest = append(pieces, rest[:n]), rest[n:]
		}
		name := "32KiB"
		if size == 0 {
			name = "lines"
		}
		evs := make([]event.Event, len(pieces))
		for i, p := range pieces {
			evs[i] = event.Event{Kind: event.KindOutput, Host: "h", Output: &event.Output{Phase: 1, Step: 1, Stream: "stdout", Data: p}}
		}
		end := event.Event{Kind: event.KindStep, Host: "h", Step: &event.Step{Phase: 1, Step: 1}}
		for _, how := range []string{"each", "stream"} {
			b.Run(name+"/"+how, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				shared := newSet()
				for range b.N {
					rd := Redactor{Set: shared}
					if size == 0 {
						b.StopTimer()
						rd.Set = newSet()
						b.StartTimer()
					}
					sc := &streamScrub{r: rd}
					if how == "each" {
						for _, ev := range evs {
							_ = rd.Event(ev)
						}
						continue
					}
					for _, ev := range evs {
						sc.pass(ev, func(event.Event) {})
					}
					sc.pass(end, func(event.Event) {})
				}
			})
		}
	}
}
