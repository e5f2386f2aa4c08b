package ssh

import (
	"io"
	"strings"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/transport"
)

// Batches says the transport sends a batch's commands together
// (transport.Batch): to a served worker (confine.Serve) in one write,
// which runs them in order and stops at the first that does not succeed;
// to any other worker or session one after the other, under the same
// rule (transport.InOrder).
func (t *Transport) Batches() bool { return true }

var _ transport.Batcher = (*Transport)(nil)

// sendBatch runs a batch's commands (transport.Batch.Run) and answers
// each.
func (t *Transport) sendBatch(cmds []transport.BatchCommand, answer func(int, transport.Result, error)) {
	ctx := cmds[0].Ctx
	together := ctx.Err() == nil
	for _, c := range cmds {
		if c.Cmd.Stdin != nil || strings.ContainsRune(c.Cmd.Command, 0) || strings.ContainsRune(c.Cmd.Dir, 0) || strings.ContainsRune(strings.Join(c.Cmd.Wrap, ""), 0) {
			together = false
		}
	}
	if together {
		if w := t.takeWorker(ctx, len(cmds[0].Cmd.Command)+len(cmds[0].Cmd.Dir) > workerPipedMax); w != nil {
			sent := w.served != "" && w.runBatch(t, cmds, answer)
			t.releaseWorker(w)
			if sent {
				return
			}
		}
	}
	transport.InOrder(cmds, answer, t.run)
}

// runBatch sends cmds to the served worker in one write, each after the
// first batched (confine.BatchedPrefix), and answers each as it ends. It
// reports false when nothing was sent and nothing answered.
func (w *worker) runBatch(t *Transport, cmds []transport.BatchCommand, answer func(int, transport.Result, error)) bool {
	ps := make([]*pending, len(cmds))
	var req strings.Builder
	for i, c := range cmds {
		next := "1"
		if transport.IsLastStep(c.Ctx) {
			next = "0"
		}
		if i > 0 {
			next = confine.BatchedPrefix + next
		}
		p, r := w.request(c.Ctx, c.Cmd, next)
		ps[i] = p
		req.WriteString(r)
	}
	start := time.Now()
	if _, err := io.WriteString(w.in, req.String()); err != nil {
		w.broken = true
		return false // the worker is gone; nothing was started
	}
	if err, ran := w.started(cmds[0].Ctx); err != nil {
		w.broken = true
		if !ran {
			return false // the served worker did not start: nothing ran
		}
		for i := range cmds {
			if i == 0 {
				answer(i, transport.Result{}, err)
			} else {
				answer(i, transport.Result{ExitCode: -1}, transport.ErrNotRun) // the worker is retired
			}
		}
		return true
	}
	for i, p := range ps {
		// The served worker answers a command after one that did not
		// succeed without running it.
		p.start = start
		res, err := w.answer(cmds[i].Ctx, t, p)
		answer(i, res, err)
		start = time.Now()
	}
	return true
}
