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
const (
	outputChunk = 32 << 10
	outputHold  = 4 << 10
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
// one line is redacted whole.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	send func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for len(w.buf) > 0 {
		cut := len(w.buf)
		if cut > outputChunk {
			cut = outputChunk
		}
		if i := bytes.LastIndexByte(w.buf[:cut], '\n'); i >= 0 {
			cut = i + 1
		} else if cut < outputHold {
			break // an open line: wait for its end
		}
		w.send(string(w.buf[:cut]))
		w.buf = w.buf[cut:]
	}
	if len(w.buf) == 0 {
		w.buf = nil // do not keep a large array for a quiet stream
	}
	return len(p), nil
}

// flush sends an open last line.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.send(string(w.buf))
		w.buf = nil
	}
}
