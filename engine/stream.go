package engine

import (
	"strings"
	"sync"

	"github.com/autoshell/agent/event"
)

// A running command's output reaches the front ends (--json, --out logs,
// the terminal, an MCP call's output) in pieces: the executor cuts them
// at line ends, each line of a slow command its own. A secret's shape can
// run over several lines (fold -w3, base64 -w4, one character a line, a
// dump's columns), and a piece redacted on its own holds too little of it
// to be matched. So each stream (a host's step's stdout or stderr) is
// redacted as a whole: its redactor holds back the end of what it was
// given — the last holdSpan bytes, in whole lines — and redacts it with
// what comes next, sending only what no later output can change:
//
//   - a cut is taken where no match of the text it has runs across it
//     (the text redacted whole is the two sides redacted apart), and with
//     at least holdSpan bytes after it, more than any shape of the set's
//     values spans: a shape that begins before the cut ends before the
//     text's end, and was seen;
//   - when a match runs across the cut, the cut moves back (holdRetries
//     times, holdSpan each), then the stream holds all it has;
//   - a stream holds at most holdMax bytes: beyond, it sends its text
//     cut at holdSpan from the end, redacted as it is (a PEM block or a
//     match of more than holdMax bytes can be split there);
//   - what is held goes out at the step's end: the next event of the
//     host that is not an output (the step event follows its output),
//     redacted whole.
//
// Nothing is lost, a stream's order is kept, lines stay whole (a line
// longer than holdMax is cut); stdout and stderr are held apart, so one
// can go out before the other's held end. What is held is shown late: a
// slow command's last lines, up to holdSpan bytes, until more output
// comes or the step ends. No timer sends them earlier: to send a held
// tail that later output could turn into the start of a shape would be
// the leak this closes.
const (
	holdMin     = 512
	holdMax     = 64 << 10
	holdRetries = 3
)

// holdSpan is how many bytes at a stream's end are held back for a set
// whose longest value is longest bytes: a shape spans at most 6 bytes of
// output a byte of the value (xxd's, od -c's and hexdump -C's columns
// with their offsets: 4.25–4.9; a separator of up to 4 bytes between
// characters: 5), and the held lines' partial ends.
func holdSpan(longest int) int { return max(holdMin, 6*longest+256) }

type streamKey struct {
	host, stream string
	phase, step  int
}

// heldStream is a stream's text not yet sent (not redacted), and its last
// event (a flush sends a copy of it).
type heldStream struct {
	key  streamKey
	last event.Event
	text string
}

// streamScrub redacts the events a host's executor emits: output events
// by stream, as above; every other event through Redactor.Event, after
// the held streams were sent. Safe for concurrent use; events go out in
// the order they were passed (out is called with the lock held).
type streamScrub struct {
	r    Redactor
	mu   sync.Mutex
	held []*heldStream // in the order each began to hold
}

// sink returns the sink that passes events through s to out.
func (s *streamScrub) sink(out event.Sink) event.Sink {
	if out == nil {
		return nil
	}
	return func(ev event.Event) { s.pass(ev, out) }
}

// pass redacts ev and passes what can be sent to out.
func (s *streamScrub) pass(ev event.Event, out func(event.Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Kind == event.KindOutput && ev.Output != nil {
		s.output(ev, out)
		return
	}
	s.flush(out)
	out(s.r.Event(ev))
}

func (s *streamScrub) output(ev event.Event, out func(event.Event)) {
	k := streamKey{host: ev.Host, stream: ev.Output.Stream, phase: ev.Output.Phase, step: ev.Output.Step}
	var h *heldStream
	for _, x := range s.held {
		if x.key == k {
			h = x
			break
		}
	}
	text := ev.Output.Data
	if h != nil {
		text = h.text + text
	}
	send, hold := s.cut(text)
	if hold == "" {
		s.drop(h)
	} else {
		if h == nil {
			h = &heldStream{key: k}
			s.held = append(s.held, h)
		}
		h.text, h.last = hold, ev
	}
	if send != "" {
		out(s.outputEvent(ev, send))
	}
}

// cut splits a stream's text into what can be sent (redacted) and what
// is held (not redacted).
func (s *streamScrub) cut(text string) (send, hold string) {
	span := holdSpan(s.r.Set.Longest())
	if len(text) <= span {
		return "", text
	}
	whole := s.r.String(text)
	first := cutBefore(text, len(text)-span)
	e := first
	for range holdRetries + 1 {
		if e <= 0 {
			break
		}
		if whole == text { // nothing in it is secret
			return text[:e], text[e:]
		}
		left := s.r.String(text[:e])
		if right := s.r.String(text[e:]); len(left)+len(right) == len(whole) && strings.HasPrefix(whole, left) && strings.HasSuffix(whole, right) {
			return left, text[e:]
		}
		e = cutBefore(text, e-span)
	}
	if len(text) <= holdMax {
		return "", text
	}
	return s.r.String(text[:first]), text[first:]
}

// cutBefore is the start of the line that holds text[at] (0 when at ≤ 0;
// at itself in a line longer than holdMax, lines being cut there).
func cutBefore(text string, at int) int {
	if at <= 0 {
		return 0
	}
	e := strings.LastIndexByte(text[:at], '\n') + 1
	if at-e > holdMax {
		return at
	}
	return e
}

// flush sends every held stream's text, redacted whole, in the order the
// streams began to hold.
func (s *streamScrub) flush(out func(event.Event)) {
	for _, h := range s.held {
		out(s.outputEvent(h.last, s.r.String(h.text)))
	}
	s.held = s.held[:0]
}

func (s *streamScrub) drop(h *heldStream) {
	if h == nil {
		return
	}
	for i, x := range s.held {
		if x == h {
			s.held = append(s.held[:i], s.held[i+1:]...)
			return
		}
	}
}

// outputEvent is ev with data (redacted) as its output; its other
// strings redacted.
func (s *streamScrub) outputEvent(ev event.Event, data string) event.Event {
	o := *ev.Output
	o.Data = ""
	ev.Output = &o
	ev = s.r.Event(ev)
	ev.Output.Data = data
	return ev
}
