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
	// A batch run in turn (NewBatchInTurn, InTurn): command i's run
	// comes on come[i] (a zero turnRun: it will not come), which one
	// goroutine (runTurns, started once) takes in order; came[i] once
	// it was sent; stopped once a command was abandoned.
	inTurn  bool
	come    []chan turnRun
	came    []bool
	running bool
	stopped bool
}

// turnRun is a command of a batch run in turn, as it came.
type turnRun struct {
	ctx context.Context
	run func(ctx context.Context) (Result, error)
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

// Preparer is a transport that can do ahead of a command's Run what does
// not depend on when it runs (its environment, where its program is):
// Prepare returns the command's Run. A batch run in turn prepares each
// command as it comes (executor), off the way from the end of the
// command before it to its own start.
type Preparer interface {
	Prepare(c Command) func(ctx context.Context) (Result, error)
}

// NewBatch is a batch of n commands.
func NewBatch(n int) *Batch {
	b := &Batch{cmds: make([]BatchCommand, n), answers: make([]chan batchAnswer, n), notRun: make([]bool, n)}
	for i := range b.answers {
		b.answers[i] = make(chan batchAnswer, 1)
	}
	return b
}

// NewBatchInTurn is a batch of n commands for a TurnBatcher: each comes
// through InTurn (or is Abandoned) and runs in turn as it comes.
// Its channels are made as the commands come: a batch of many slots
// that few commands take costs little.
func NewBatchInTurn(n int) *Batch {
	return &Batch{answers: make([]chan batchAnswer, n), notRun: make([]bool, n),
		inTurn: true, come: make([]chan turnRun, n), came: make([]bool, n)}
}

// turnChans makes command i's channels of a batch run in turn; b.mu held.
func (b *Batch) turnChans(i int) {
	if b.come[i] == nil {
		b.come[i] = make(chan turnRun, 1)
	}
	if b.answers[i] == nil {
		b.answers[i] = make(chan batchAnswer, 1)
	}
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
func (b *Batch) Len() int { return len(b.answers) }

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
	if b.inTurn {
		// The commands before i run as they come; i and those after
		// it do not.
		if b.came[i] {
			return false // it came: it is answered
		}
		b.came[i] = true
		b.turnChans(i)
		b.startTurns()
		b.come[i] <- turnRun{} // buffered, empty: it never came
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

// InTurn is command i's Run in a batch made by NewBatchInTurn, on a
// transport that runs a batch's commands itself, one after the other
// (the local machine): run runs command i as soon as every command
// before it ended, each having run and exited 0 — without waiting for
// the batch to be complete, so that a command starts while the steps
// before it are still being recorded. Otherwise (or when ctx ended
// before its turn) command i does not run: ErrNotRun. One goroutine runs
// the commands in order as they come, so that the next starts as the one
// before ends, with no hand-over between the steps' goroutines. Each
// command of the batch comes through InTurn or is Abandoned; Abandon of
// the first command that did not come ends the batch.
func (b *Batch) InTurn(ctx context.Context, i int, run func(ctx context.Context) (Result, error)) (Result, error) {
	b.mu.Lock()
	if !b.inTurn || b.stopped || b.came[i] {
		b.notRun[i] = true
		b.mu.Unlock()
		return Result{ExitCode: -1}, ErrNotRun
	}
	b.came[i] = true
	b.turnChans(i)
	b.startTurns()
	come, answer := b.come[i], b.answers[i]
	b.mu.Unlock()
	come <- turnRun{ctx: ctx, run: run}
	a := <-answer
	return a.res, a.err
}

// startTurns starts runTurns once; b.mu held.
func (b *Batch) startTurns() {
	if !b.running {
		b.running = true
		go b.runTurns()
	}
}

// runTurns runs the commands of a batch in turn, in order, as they come,
// until one was abandoned (or the last).
func (b *Batch) runTurns() {
	ok := true
	for i := range b.come {
		b.mu.Lock()
		b.turnChans(i)
		come := b.come[i]
		b.mu.Unlock()
		t := <-come
		if t.run == nil {
			b.stopTurns(i)
			return
		}
		if !ok || t.ctx.Err() != nil {
			ok = false
			b.answer(i, Result{ExitCode: -1}, ErrNotRun)
			continue
		}
		res, err := t.run(t.ctx)
		ok = err == nil && res.ExitCode == 0
		b.answer(i, res, err)
	}
}

// stopTurns ends a batch run in turn at command i, abandoned: it and
// those after it do not run, those that came are answered so.
func (b *Batch) stopTurns(i int) {
	b.mu.Lock()
	b.stopped = true
	var came []int
	for j := i; j < len(b.come); j++ {
		b.notRun[j] = true
		if j > i && b.came[j] {
			came = append(came, j)
		}
	}
	b.mu.Unlock()
	for _, j := range came {
		b.answer(j, Result{ExitCode: -1}, ErrNotRun)
	}
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
