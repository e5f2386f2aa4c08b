package executor

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// TestOutputEvents: a command's output arrives as output events, every
// byte of both streams, in whole lines where lines allow, before the
// step's own event, whose output is the bounded capture.
func TestOutputEvents(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	// 200,000 lines (1.3 MB) on stdout, a 100 KB line without newline at
	// the end, two lines on stderr.
	cmd := `seq 1 200000; head -c 100000 /dev/zero | tr '\0' x; echo oops >&2; echo again >&2`
	r, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "ok" {
		t.Fatalf("status %s: %s", r.Status, r.Observation)
	}
	var stdout, stderr strings.Builder
	last := -1
	for i, ev := range h.events {
		switch ev.Kind {
		case event.KindOutput:
			o := ev.Output
			if o.Step != 1 || o.Phase != r.Phase {
				t.Fatalf("output event for step %d phase %d", o.Step, o.Phase)
			}
			if len(o.Data) > outputChunk {
				t.Fatalf("output event of %d bytes", len(o.Data))
			}
			if o.Stream == "stdout" {
				stdout.WriteString(o.Data)
			} else {
				stderr.WriteString(o.Data)
			}
		case event.KindStep:
			last = i
		}
	}
	if last != len(h.events)-1 {
		t.Fatalf("the step event is not last: %d of %d", last, len(h.events))
	}
	var want bytes.Buffer
	for i := 1; i <= 200000; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	want.WriteString(strings.Repeat("x", 100000))
	if stdout.String() != want.String() {
		t.Errorf("stdout events hold %d bytes, want %d", stdout.Len(), want.Len())
	}
	if stderr.String() != "oops\nagain\n" {
		t.Errorf("stderr events %q", stderr.String())
	}
	omitted := int64(want.Len()) - 2*32<<10
	if !strings.Contains(r.Observation, "[output truncated: "+strconv.Itoa(int(omitted))+" bytes omitted]") {
		t.Errorf("observation does not count %d omitted bytes: %q", omitted, clip(r.Observation))
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:150] + " … " + s[len(s)-150:]
	}
	return s
}

// TestOutputEventsOnlyCommands: the structured tools' raw output is not
// streamed (their observation is what they report).
func TestOutputEventsOnlyCommands(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	if _, err := e.RunStep(context.Background(), planner.Step{Tool: "sys_monitor", Parameters: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range h.events {
		if ev.Kind == event.KindOutput {
			t.Fatalf("sys_monitor streamed %q", ev.Output.Data)
		}
	}
}

// FuzzLineWriter: whatever is written, in whatever pieces, is sent
// entire and in order, in pieces of at most outputChunk bytes, each but
// the last ending a line or at least outputHold bytes long.
func FuzzLineWriter(f *testing.F) {
	f.Add([]byte("a\nbc\n"), uint16(1))
	f.Add(bytes.Repeat([]byte("x"), 70000), uint16(5000))
	f.Add([]byte("\n\n\nabc"), uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, step uint16) {
		n := int(step)%(3*outputChunk) + 1
		var sent []string
		w := &lineWriter{send: func(s string) { sent = append(sent, s) }}
		for i := 0; i < len(data); i += n {
			w.Write(data[i:min(i+n, len(data))])
		}
		w.flush()
		if got := strings.Join(sent, ""); got != string(data) {
			t.Fatalf("sent %q, wrote %q", got, data)
		}
		for i, s := range sent {
			if s == "" || len(s) > outputChunk {
				t.Fatalf("piece %d of %d bytes", i, len(s))
			}
			if i < len(sent)-1 && !strings.HasSuffix(s, "\n") && len(s) < outputHold {
				t.Fatalf("piece %d %q is a short open line", i, s)
			}
		}
	})
}

// TestLineWriterCoalesces: Write does not wait for the sender, and what
// arrives while it sends goes in the next piece, up to outputChunk bytes
// (a fast command's output is redacted in a few large pieces); what
// waits is bounded (outputPending): then Write waits.
func TestLineWriterCoalesces(t *testing.T) {
	release := make(chan struct{})
	var sent []string
	w := &lineWriter{send: func(s string) {
		if len(sent) == 0 {
			<-release // the first piece's send is slow
		}
		sent = append(sent, s)
	}}
	line := strings.Repeat("x", 99) + "\n"
	piece := []byte(strings.Repeat(line, 320)) // 32,000 bytes, as a pipe's reads
	// 1,600,000 bytes: more than outputPending, with a piece over, even when
	// the sender's first take was a whole outputChunk (a loaded machine let
	// the writer add 7 pieces before it: 40 then all fitted)
	const n = 50
	var wrote atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			w.Write(piece)
			wrote.Add(1)
		}
	}()
	// the writes up to outputPending do not wait for the first send
	deadline := time.Now().Add(10 * time.Second)
	for int(wrote.Load())*len(piece) < outputPending && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := int(wrote.Load()); got*len(piece) < outputPending {
		t.Fatalf("%d writes of %d bytes done while the sender was busy, want %d", got, len(piece), outputPending/len(piece))
	}
	time.Sleep(20 * time.Millisecond)
	w.mu.Lock()
	pending := len(w.buf)
	w.mu.Unlock()
	if got := wrote.Load(); got == n || pending > outputPending+len(piece) {
		t.Fatalf("%d of %d writes done, %d bytes waiting: not bounded by %d", got, n, pending, outputPending)
	}
	close(release)
	<-done
	w.flush()
	if got, want := strings.Join(sent, ""), strings.Repeat(string(piece), n); got != want {
		t.Fatalf("sent %d bytes, want %d", len(got), len(want))
	}
	// the first piece, then the backlog outputChunk at a time, then
	// what the writer added as the sender caught up: far fewer than the
	// writes
	if len(sent) > n/3 {
		t.Errorf("%d pieces of %d writes", len(sent), n)
	}
	for i, s := range sent {
		if len(s) > outputChunk || !strings.HasSuffix(s, "\n") {
			t.Fatalf("piece %d: %d bytes, ends %q", i, len(s), s[max(0, len(s)-3):])
		}
	}
}
