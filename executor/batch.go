package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// A plan's static steps in one request (docs/decisions.md): consecutive
// execute_command steps whose parameters use no variable an earlier step
// sets and that have no condition are prepared up front — every stage up
// to the run: templates, risk, the decision, confinement, the undo
// journal, the audit line before the run — and their commands sent to the
// host's worker together (transport.Batch), which runs them in order and
// stops at the first that does not succeed. A step joins only after one
// held to the read-only level that journals nothing (what it looked at on
// the host before the batch is still so when it runs) and that may not
// fail on (ignore_errors), and only where no person would be asked (a
// person sees the outcome of the steps before first). Their step_start
// and output events are held until the steps before ended, so the events
// come as a sequential run emits them; their start records go to the
// session record (Config.Ahead) and their audit lines before the run are
// written before the batch is sent, and are on disk before it (fail
// closed). A step the batch did not run gets an audit line that says so,
// no events; its undo journal entry, written before the batch, records
// its files as they were (undo leaves them).

// staticSteps is how many of steps, from the first, may run as a batch
// by what they say (runBatch decides by what they do): none when the
// host's transport cannot send them together.
func (e *Executor) staticSteps(steps []planner.Step, saved map[string]bool) int {
	if e.cfg.DryRun || e.guard != nil || len(steps) < 2 {
		return 0
	}
	if b, ok := transport.As[transport.Batcher](e.cfg.Transport); !ok || !b.Batches() {
		return 0
	}
	set := maps.Clone(saved)
	n := 0
	for _, st := range steps {
		if !static(st, set) {
			break
		}
		n++
		if st.IgnoreErrors { // the batch goes on after none that may fail
			break
		}
		if st.SaveOutputAs != "" {
			set[st.SaveOutputAs] = true
		}
	}
	return n
}

// static reports whether st is a command whose parameters use no
// variable in set nor last, with no condition.
func static(st planner.Step, set map[string]bool) bool {
	if st.Tool != tools.ExecuteCommandName || st.Condition != "" {
		return false
	}
	names, err := execctx.ParamVars(st.Parameters)
	if err != nil {
		return false
	}
	return !slices.ContainsFunc(names, func(n string) bool { return set[n] || n == execctx.LastVar })
}

// runBatch runs sts, static steps (staticSteps), as a batch where what
// they do allows: the results of the steps that ended, in order, as
// RunStep's, stopping after the first that failed (not ignored). last:
// sts ends the plan.
func (e *Executor) runBatch(ctx context.Context, sts []planner.Step, last bool) ([]StepResult, error) {
	// On a transport that runs a batch in turn, each step's command
	// starts once the step is prepared, and the steps whose command
	// ended are ended between the preparations of the next; at most
	// turnMax steps a batch (RunPlan goes on with the rest).
	var turn *batchEnds
	if b, ok := transport.As[transport.TurnBatcher](e.cfg.Transport); ok && b.BatchesInTurn() {
		if len(sts) > turnMax {
			sts, last = sts[:turnMax], false
		}
		turn = &batchEnds{b: transport.NewBatchInTurn(len(sts)), turn: true}
	}
	stepCtx := func(k int) context.Context {
		if last && k == len(sts)-1 {
			return transport.WithLastStep(ctx)
		}
		return ctx
	}
	// Prepare each step up to its run while the one before may be
	// followed. The first step that cannot join ends the batch; it is
	// done after the batch (tail), from where it stopped.
	var ss []*stepRun
	var tail *stepRun
	var tailD *denial
	tailDecided := true
	for k, st := range sts {
		if k > 0 && ctx.Err() != nil {
			break
		}
		s := e.newStep(st)
		if k > 0 {
			s.out = &heldEvents{out: e.cfg.Emit}
			e.held = s.out
		}
		d := e.through(ctx, s, e.beforeDecide())
		if d == nil && k > 0 && e.mayAsk(s.r.Risk.Level) && e.cfg.Approver.Prompter() != nil {
			e.held = nil
			tail, tailDecided = s, false // a person decides once the steps before ended
			break
		}
		if d == nil {
			d = e.through(ctx, s, e.beforeRun())
		}
		e.held = nil
		if d != nil || !e.batchable(s) {
			tail, tailD = s, d
			break
		}
		ss = append(ss, s)
		if turn != nil {
			e.startInTurn(turn, s)
		}
		if !followable(s) {
			break
		}
		if turn != nil {
			if len(turn.ss)-len(turn.dones) >= turnChunk {
				e.startChunk(turn, stepCtx)
			}
			for e.endNext(ctx, turn, len(turn.dones)-turn.n >= turnAhead) {
			}
			if turn.stopped != "" {
				break
			}
		}
	}
	var results []StepResult
	var runErr error
	stopped := "" // why the steps after did not run
	if turn != nil {
		e.startChunk(turn, stepCtx)
		for e.endNext(ctx, turn, true) {
		}
		if n := len(turn.ss); n > 0 && n < turn.b.Len() {
			turn.b.Abandon(n) // the batch ends there: its runner stops
		}
		if a := e.cfg.Audit; a != nil {
			// The batch's end lines on disk before what follows it (as
			// AppendBehind's before the next line); a failure fails
			// every later line.
			a.CaughtUp()
		}
		results, runErr, stopped = turn.results, turn.runErr, turn.stopped
	} else if len(ss) == 1 {
		r, err := e.end(ctx, ss[0], e.through(stepCtx(0), ss[0], e.running()))
		results, runErr = append(results, r), err
		stopped = e.stops(r, err, ss[0].st)
	} else if len(ss) > 1 {
		results, runErr, stopped = e.sendBatch(ctx, ss, stepCtx)
	}
	if tail != nil {
		if stopped != "" {
			e.notRun(ctx, tail, stopped)
		} else {
			tail.out.release()
			d := tailD
			if d == nil && !tailDecided {
				d = e.through(ctx, tail, e.beforeRun())
			}
			if d == nil {
				d = e.through(stepCtx(len(ss)), tail, e.running())
			}
			r, err := e.end(ctx, tail, d)
			results, runErr = append(results, r), err
		}
	}
	e.n = results[len(results)-1].Step // the steps not run are not counted
	return results, runErr
}

// sendBatch runs ss's commands as one batch and ends each step in order.
func (e *Executor) sendBatch(ctx context.Context, ss []*stepRun, stepCtx func(int) context.Context) (results []StepResult, runErr error, stopped string) {
	b := transport.NewBatch(len(ss))
	for k, s := range ss {
		s.batch, s.slot = b, k
		if k > 0 && e.cfg.Ahead != nil {
			for _, ev := range s.out.starts() {
				e.cfg.Ahead(ev)
			}
		}
	}
	// Every audit line before a run, and the start records, on disk
	// before any command of the batch runs (fail closed).
	if durable := e.durable(); durable != nil {
		if err := durable(); err != nil {
			r, err := e.end(ctx, ss[0], notDurable(&ss[0].r, ss[0].st.Tool, err))
			for _, s := range ss[1:] {
				e.notRun(ctx, s, fmt.Sprintf("step %d could not be recorded", r.Step))
			}
			return []StepResult{r}, err, "the audit log failed"
		}
	}
	be := &batchEnds{b: b, ss: ss, prevEnd: ss[0].start}
	for k, s := range ss {
		be.launch(k, func() *denial { return e.run(stepCtx(k), s) })
	}
	for e.endNext(ctx, be, true) {
	}
	return be.results, be.runErr, be.stopped
}

// turnChunk is how many steps of a batch run in turn are started
// together, once their start records are on disk (one fsync), while the
// next are prepared; turnAhead how many may be started and not yet
// ended: the preparation goes no further ahead of the commands; turnMax
// how many steps one such batch takes (its slots are made up front).
const (
	turnChunk = 8
	turnAhead = 2 * turnChunk
	turnMax   = 256
)

// batchEnds ends a batch's steps in order, as their runs end.
type batchEnds struct {
	b       *transport.Batch
	turn    bool // run in turn: the end lines' fsyncs wait for the next chunk
	ss      []*stepRun
	dones   []chan *denial
	n       int       // steps ended
	prevEnd time.Time // when the last one ended
	results []StepResult
	runErr  error
	stopped string // why the steps after did not run
}

// launch runs step k, its command slot k of the batch, with run.
func (be *batchEnds) launch(k int, run func() *denial) {
	done := make(chan *denial, 1)
	be.dones = append(be.dones, done)
	go func() {
		d := run()
		be.b.Abandon(k) // a step ended before its command: the others do not wait
		done <- d
	}()
}

// startInTurn adds s, prepared, to a batch run in turn: its start record
// goes to the session record, and it is started with the steps prepared
// with it (startChunk).
func (e *Executor) startInTurn(be *batchEnds, s *stepRun) {
	k := len(be.ss)
	be.ss = append(be.ss, s)
	s.batch, s.slot = be.b, k
	if k == 0 {
		// Its output goes out as it comes, never held by a later
		// step's preparation (Executor.held).
		s.out = &heldEvents{out: e.cfg.Emit, released: true}
		be.prevEnd = s.start
	} else if e.cfg.Ahead != nil {
		for _, ev := range s.out.starts() {
			e.cfg.Ahead(ev)
		}
	}
}

// startChunk starts the steps added since the last call: each command
// runs once what was recorded before it is on disk (one wait for them
// all; fail closed) and the commands before it succeeded.
func (e *Executor) startChunk(be *batchEnds, stepCtx func(int) context.Context) {
	if len(be.dones) == len(be.ss) {
		return
	}
	var durable func() error
	if d := e.durable(); d != nil {
		durable = sync.OnceValue(d)
	}
	for k := len(be.dones); k < len(be.ss); k++ {
		s := be.ss[k]
		be.launch(k, func() *denial {
			if durable != nil {
				if err := durable(); err != nil {
					return notDurable(&s.r, s.st.Tool, err)
				}
			}
			return e.run(stepCtx(k), s)
		})
	}
}

// endNext ends the next step of be once its run ended — without wait,
// only when it already has — and reports whether it ended one.
func (e *Executor) endNext(ctx context.Context, be *batchEnds, wait bool) bool {
	k := be.n
	if k >= len(be.dones) {
		return false
	}
	var d *denial
	if wait {
		d = <-be.dones[k]
	} else {
		select {
		case d = <-be.dones[k]:
		default:
			return false
		}
	}
	be.n++
	s := be.ss[k]
	if be.turn {
		e.deferAudit = true
		defer func() { e.deferAudit = false }()
	}
	if be.stopped != "" && be.b.NotRun(k) {
		e.notRun(ctx, s, be.stopped)
		return true
	}
	if d == nil && be.b.NotRun(k) {
		// Nothing before it failed here, yet the host did not run it
		// (the batch was abandoned, the worker lost).
		d = broken(fmt.Errorf("step %d (%s): %w", s.r.Step, s.st.Tool, transport.ErrNotRun))
	}
	if k > 0 {
		s.out.release()
		s.start = be.prevEnd // its time is from the end of the one before
	}
	if d == nil {
		d = e.through(ctx, s, []stage{e.harvestRead, e.record})
	}
	r, err := e.end(ctx, s, d)
	be.prevEnd = time.Now()
	be.results = append(be.results, r)
	if err != nil {
		be.runErr = err
	}
	if be.stopped == "" {
		be.stopped = e.stops(r, err, s.st)
	}
	return true
}

// stops says why the steps after r do not run: "" when they do.
func (e *Executor) stops(r StepResult, err error, st planner.Step) string {
	switch {
	case err != nil:
		return fmt.Sprintf("step %d did not end (%v)", r.Step, err)
	case r.Status == execctx.StatusError && st.IgnoreErrors:
		return ""
	case r.Status == execctx.StatusError || r.Status == execctx.StatusDenied:
		return fmt.Sprintf("step %d failed", r.Step)
	}
	return ""
}

// batchable reports whether s's command may go in a batch: a command on
// the host's own transport (not as another user) that can send one.
func (e *Executor) batchable(s *stepRun) bool {
	if s.p.cls.command == "" || s.p.tr != e.cfg.Transport {
		return false
	}
	b, ok := transport.As[transport.Batcher](s.runOn)
	return ok && b.Batches()
}

// followable reports whether a step may be followed in a batch: held to
// the read-only level, it journals nothing and makes no room in ~, so
// what the next step found on the host before the batch is still so
// when it runs; and it may not fail on.
func followable(s *stepRun) bool {
	return s.level == confine.ReadOnly && len(s.p.cls.undo) == 0 && s.note == "" && !s.st.IgnoreErrors
}

// notRun records a prepared step the batch did not run: an audit line
// that says so when its line before the run was written, and its
// journaled files as they still are. Its held events are dropped.
func (e *Executor) notRun(ctx context.Context, s *stepRun, why string) {
	if len(s.before) > 0 {
		e.shellChanged(context.WithoutCancel(ctx), s.p.tr, s.p.cls.undo, nil)
	}
	if !s.audited {
		return
	}
	r := s.r
	r.Status, r.Observation, r.Duration = execctx.StatusSkipped, "[not run: "+why+"]", 0
	e.audit(context.WithoutCancel(ctx), r, nil)
}

// heldEvents holds a batch's step's events until the steps before it
// ended (release), then passes them on as they come.
type heldEvents struct {
	out      event.Sink
	mu       sync.Mutex
	evs      []event.Event
	released bool
}

func (h *heldEvents) emit(ev event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		h.out.Emit(ev)
		return
	}
	h.evs = append(h.evs, ev)
}

// release passes on what was held, and from now on what comes.
func (h *heldEvents) release() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.evs {
		h.out.Emit(ev)
	}
	h.evs, h.released = nil, true
}

// starts are the step_start events held.
func (h *heldEvents) starts() []event.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []event.Event
	for _, ev := range h.evs {
		if ev.Kind == event.KindStepStart {
			out = append(out, ev)
		}
	}
	return out
}
