package transport

import (
	"context"
	"errors"
	"sync"
)

// A Batch is the commands of consecutive static steps of a plan, sent to
// the host's worker together (docs/decisions.md, "A plan's static steps
// in one request"): each step's tool runs its command with a context that
// names the batch and the command's place in it (WithBatch), and the
// transport gathers them and sends them at once. The host runs them in
// order, each after the first only while every one before it ran and
// exited 0 (and its controller is still there): the others are not run
// and their Run returns ErrNotRun. Each Run returns when its own command
// ended. A transport that cannot send them together runs them one after
// the other under the same rule (InOrder).
type Batch struct {
	mu        sync.Mutex
	cmds      []BatchCommand
	in        int
	answers   []chan batchAnswer
	notRun    []bool
	abandoned error
	// The commands run in turn (InTurn): turned once one came; ended[i]
	// is closed once command i ended or will not run, ok[i] when it ran
	// and exited 0.
	turned bool
	ended  []chan struct{}
	ok     []bool
}

// BatchCommand is one command of a batch and the context of its Run.
type BatchCommand struct {
	Ctx context.Context
	Cmd Command
}

type batchAnswer struct {
	res Result
	err error
}

// ErrNotRun is a batched command the host did not run: an earlier one of
// its batch did not run or exited non-zero, or the batch ended.
var ErrNotRun = errors.New("not run: an earlier command of its batch did not succeed")

// Batcher is a transport that takes a batch's commands (Run with
// WithBatch) when Batches says so; others must not be given any.
type Batcher interface {
	Batches() bool
}

// TurnBatcher is a Batcher that runs a batch's commands itself, in turn
// as they come (Batch.InTurn), rather than sending them together: its
// caller may start each command's Run as soon as its step is prepared.
type TurnBatcher interface {
	Batcher
	BatchesInTurn() bool
}

// NewBatch is a batch of n commands.
func NewBatch(n int) *Batch {
	b := &Batch{cmds: make([]BatchCommand, n), answers: make([]chan batchAnswer, n), notRun: make([]bool, n),
		ended: make([]chan struct{}, n), ok: make([]bool, n)}
	for i := range b.answers {
		b.answers[i] = make(chan batchAnswer, 1)
		b.ended[i] = make(chan struct{})
	}
	return b
}

type batchKey struct{}

type batchSlot struct {
	b *Batch
	i int
}

// WithBatch has the command run with ctx be command i of b.
func WithBatch(ctx context.Context, b *Batch, i int) context.Context {
	return context.WithValue(ctx, batchKey{}, batchSlot{b, i})
}

// WithoutBatch is ctx without the batch WithBatch put in it: for the
// transport a batching one runs a command through once its turn came.
func WithoutBatch(ctx context.Context) context.Context {
	if b, _ := BatchOf(ctx); b == nil {
		return ctx
	}
	return context.WithValue(ctx, batchKey{}, batchSlot{})
}

// BatchOf returns the batch and place WithBatch put in ctx; b is nil when
// there is none.
func BatchOf(ctx context.Context) (b *Batch, i int) {
	s, _ := ctx.Value(batchKey{}).(batchSlot)
	return s.b, s.i
}

// Len is the number of commands.
func (b *Batch) Len() int { return len(b.cmds) }

// Run is command i's Run: it waits until every command of the batch came,
// and the last to come calls send with all of them, in order; send must
// answer each (answer, in order, as each ends). Then Run returns its
// command's answer. A Run whose ctx ends before the batch is complete
// returns ctx's error, and so does every other once they all came or one
// was Abandoned: nothing was sent.
func (b *Batch) Run(ctx context.Context, i int, cmd Command, send func(cmds []BatchCommand, answer func(i int, res Result, err error))) (Result, error) {
	b.mu.Lock()
	if b.abandoned != nil {
		err := b.abandoned
		b.mu.Unlock()
		return Result{}, err
	}
	b.cmds[i] = BatchCommand{Ctx: ctx, Cmd: cmd}
	b.in++
	lead := b.in == len(b.cmds)
	b.mu.Unlock()
	if lead {
		send(b.cmds, b.answer)
	}
	select {
	case a := <-b.answers[i]:
		return a.res, a.err
	case <-ctx.Done():
		if !lead {
			// The batch was not complete: nothing was sent, and the
			// lead (if one comes) sees the batch abandoned.
			if b.abandon(i, ctx.Err()) {
				return Result{}, ctx.Err()
			}
		}
		a := <-b.answers[i] // sent: the lead answers every command
		return a.res, a.err
	}
}

// answer gives command i its result (ErrNotRun: it did not run).
func (b *Batch) answer(i int, res Result, err error) {
	if errors.Is(err, ErrNotRun) {
		b.mu.Lock()
		b.notRun[i] = true
		b.mu.Unlock()
	}
	select {
	case b.answers[i] <- batchAnswer{res, err}:
	default: // answered already
	}
}

// abandon ends a batch not yet complete with err: the commands that came
// are answered err (not run), and so is any that comes later. It reports
// false when the batch was complete (sent).
func (b *Batch) abandon(i int, err error) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.turned {
		// In turn: the commands before i ran or run as they came; i and
		// those after it do not.
		b.endTurn(i, false, true)
		return false
	}
	if b.in == len(b.cmds) && b.abandoned == nil {
		return false
	}
	if b.abandoned == nil {
		b.abandoned = err
	}
	for j := range b.cmds {
		b.notRun[j] = true
		select {
		case b.answers[j] <- batchAnswer{err: err}:
		default:
		}
	}
	return true
}

// Abandon ends the batch when command i will not come (its step ended
// before its command): if the batch was not sent, no command of it runs.
// It reports whether nothing was sent.
func (b *Batch) Abandon(i int) bool {
	return b.abandon(i, errBatchAbandoned)
}

var errBatchAbandoned = errors.New("not run: its batch was abandoned before it was sent")

// InTurn is command i's Run on a transport that runs a batch's commands
// itself, one after the other (the local machine): run runs command i as
// soon as every command before it ended, each having run and exited 0 —
// without waiting for the batch to be complete, so that a command starts
// while the steps before it are still being recorded. Otherwise, or when
// ctx ends first, command i does not run: ErrNotRun. Each command of a
// batch comes through InTurn or is Abandoned; a batch abandoned before
// any came runs none.
func (b *Batch) InTurn(ctx context.Context, i int, run func(ctx context.Context) (Result, error)) (Result, error) {
	b.mu.Lock()
	if b.abandoned != nil {
		b.mu.Unlock()
		return Result{ExitCode: -1}, ErrNotRun
	}
	b.turned = true
	b.mu.Unlock()
	if i > 0 {
		select {
		case <-b.ended[i-1]:
		case <-ctx.Done():
		}
		b.mu.Lock()
		ok := b.ok[i-1] && ctx.Err() == nil && b.isEnded(i-1)
		b.mu.Unlock()
		if !ok {
			b.mu.Lock()
			b.endTurn(i, false, true)
			b.mu.Unlock()
			return Result{ExitCode: -1}, ErrNotRun
		}
	}
	res, err := run(ctx)
	b.mu.Lock()
	b.endTurn(i, err == nil && res.ExitCode == 0, false)
	b.mu.Unlock()
	return res, err
}

// isEnded reports whether command i ended; b.mu held.
func (b *Batch) isEnded(i int) bool {
	select {
	case <-b.ended[i]:
		return true
	default:
		return false
	}
}

// endTurn ends command i in turn, ok when it ran and exited 0, notRun
// when it did not run; a command that ended already stays as it ended.
// b.mu held.
func (b *Batch) endTurn(i int, ok, notRun bool) {
	if b.isEnded(i) {
		return
	}
	b.ok[i], b.notRun[i] = ok, notRun
	close(b.ended[i])
}

// NotRun reports whether command i was answered as not run.
func (b *Batch) NotRun(i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.notRun[i]
}

// InOrder answers cmds one after the other with run, each after the first
// only while every one before it ran and exited 0 (the others ErrNotRun):
// a batch on a transport that cannot send it together.
func InOrder(cmds []BatchCommand, answer func(i int, res Result, err error), run func(ctx context.Context, cmd Command) (Result, error)) {
	ok := true
	for i, c := range cmds {
		if !ok || c.Ctx.Err() != nil {
			ok = false
			answer(i, Result{ExitCode: -1}, ErrNotRun)
			continue
		}
		res, err := run(c.Ctx, c.Cmd)
		ok = err == nil && res.ExitCode == 0
		answer(i, res, err)
	}
}
