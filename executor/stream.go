package executor

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/transport"
)

// Output events carry a running command's output as it arrives: whole lines
// where lines allow, at most outputChunk bytes each; a line still open is
// sent once it reaches outputHold bytes, and when the command ends.
//
// The output is redacted piece by piece, and a piece's cost is mostly
// the redactor's tables coming back into the cache (docs/bench.md,
// "Redaction per MiB"): a sender of their own takes what arrived while
// it sent the last piece, so that a fast command's output goes in a few
// large pieces and a slow one's as soon as each line arrives. What waits
// is at most outputPending bytes (then the command's reader waits).
const (
	outputChunk   = 256 << 10
	outputHold    = 4 << 10
	outputPending = 1 << 20
)

// streamTransport is a step's transport whose commands also send what they
// print, in full, as output events while they run (the step event holds
// the bounded capture). Everything else is the transport's own.
type streamTransport struct {
	transport.Transport
	emit func(stream, data string)
}

// Unwrap returns the transport below (transport.Unwrapper).
func (s streamTransport) Unwrap() transport.Transport { return s.Transport }

// streaming returns tr for a step whose output goes to emit, or tr itself
// when no one receives events.
// A batch's step's go to held until the steps before it ended (nil: none).
func (e *Executor) streaming(tr transport.Transport, phase, step int, held *heldEvents) transport.Transport {
	if e.cfg.Emit == nil {
		return tr
	}
	var mu sync.Mutex // stdout and stderr are written from two goroutines
	return streamTransport{Transport: tr, emit: func(stream, data string) {
		mu.Lock()
		defer mu.Unlock()
		ev := event.Event{Kind: event.KindOutput, Output: &event.Output{Phase: phase, Step: step, Stream: stream, Data: data}}
		if held != nil {
			held.emit(e.filled(ev))
			return
		}
		e.emit(ev)
	}}
}

func (t streamTransport) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	out := &lineWriter{send: func(s string) { t.emit("stdout", s) }}
	errw := &lineWriter{send: func(s string) { t.emit("stderr", s) }}
	cmd.Stdout = tee(cmd.Stdout, out)
	cmd.Stderr = tee(cmd.Stderr, errw)
	res, err := t.Transport.Run(ctx, cmd)
	out.flush()
	errw.flush()
	return res, err
}

func tee(w, extra io.Writer) io.Writer {
	if w == nil {
		return extra
	}
	return io.MultiWriter(w, extra)
}

// lineWriter passes what is written to send in pieces that end at a line
// end where one is near, so that a renderer can show lines and a secret on
// one line is redacted whole. Write only queues: a goroutine of the
// writer's sends, one piece at a time and in order, while what arrives
// meanwhile queues up behind it (at most outputPending bytes: then Write
// waits for the sender); flush waits for it and sends an open last line.
type lineWriter struct {
	mu      sync.Mutex
	cond    sync.Cond // the sender took a piece or stopped (L is &mu)
	buf     []byte
	sending bool // a sender runs
	send    func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cond.L == nil { // the zero lineWriter is ready to use
		w.cond.L = &w.mu
	}
	for len(w.buf) >= outputPending {
		w.cond.Wait()
	}
	w.buf = append(w.buf, p...)
	if !w.sending && w.cut(false) > 0 {
		w.sending = true
		go w.sender()
	}
	return len(p), nil
}

// cut is how many bytes of buf the next piece takes: up to the last line
// end among its first outputChunk bytes, or outputChunk bytes of a long
// line; 0 while buf holds only an open line shorter than outputHold,
// unless last (the command ended).
func (w *lineWriter) cut(last bool) int {
	cut := min(len(w.buf), outputChunk)
	if i := bytes.LastIndexByte(w.buf[:cut], '\n'); i >= 0 {
		return i + 1
	}
	if cut < outputHold && !last {
		return 0
	}
	return cut
}

// sender sends the pieces buf holds, until it holds none.
func (w *lineWriter) sender() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		n := w.cut(false)
		if n == 0 {
			break
		}
		piece := string(w.buf[:n])
		w.buf = w.buf[n:]
		if len(w.buf) == 0 {
			w.buf = nil // do not keep a large array for a quiet stream
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		w.send(piece)
		w.mu.Lock()
	}
	w.sending = false
	w.cond.Broadcast()
}

// flush waits for the sender and sends what is left (an open last line).
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.sending {
		w.cond.Wait()
	}
	for len(w.buf) > 0 {
		n := w.cut(true)
		w.send(string(w.buf[:n]))
		w.buf = w.buf[n:]
	}
	w.buf = nil
}
