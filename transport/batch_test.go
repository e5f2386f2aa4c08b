package transport

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// inTurn runs a batch of n commands through InTurn, each from its own
// goroutine started in reverse order (the last comes first), command i
// exiting with codes[i]; abandon names commands that never come
// (Abandoned instead). It returns the order they ran in and each one's
// error.
func inTurn(t *testing.T, ctx context.Context, codes []int, abandon map[int]bool) (ran []int, errs []error, b *Batch) {
	t.Helper()
	b = NewBatchInTurn(len(codes))
	var mu sync.Mutex
	errs = make([]error, len(codes))
	var wg sync.WaitGroup
	for i := len(codes) - 1; i >= 0; i-- {
		wg.Go(func() {
			if abandon[i] {
				b.Abandon(i)
				return
			}
			res, err := b.InTurn(ctx, i, func(context.Context) (Result, error) {
				mu.Lock()
				ran = append(ran, i)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				return Result{ExitCode: codes[i]}, nil
			})
			errs[i] = err
			if err == nil && res.ExitCode != codes[i] {
				t.Errorf("command %d: exit code %d, want %d", i, res.ExitCode, codes[i])
			}
			b.Abandon(i) // as the executor does once a step's run ended
		})
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	return ran, errs, b
}

func TestBatchInTurnInOrder(t *testing.T) {
	ran, errs, b := inTurn(t, context.Background(), []int{0, 0, 0, 0}, nil)
	if !slices.Equal(ran, []int{0, 1, 2, 3}) {
		t.Errorf("ran %v, want in order", ran)
	}
	for i, err := range errs {
		if err != nil || b.NotRun(i) {
			t.Errorf("command %d: %v, not run %v", i, err, b.NotRun(i))
		}
	}
}

func TestBatchInTurnStopsAtFailure(t *testing.T) {
	ran, errs, b := inTurn(t, context.Background(), []int{0, 3, 0, 0}, nil)
	if !slices.Equal(ran, []int{0, 1}) {
		t.Errorf("ran %v, want 0 and 1 only", ran)
	}
	for i, err := range errs {
		if notRun := i >= 2; errors.Is(err, ErrNotRun) != notRun || b.NotRun(i) != notRun {
			t.Errorf("command %d: %v, not run %v", i, err, b.NotRun(i))
		}
	}
}

// A command that never comes (its step ended before it) stops those
// after it; those before it ran.
func TestBatchInTurnAbandoned(t *testing.T) {
	ran, errs, b := inTurn(t, context.Background(), []int{0, 0, 0, 0}, map[int]bool{2: true})
	if !slices.Equal(ran, []int{0, 1}) {
		t.Errorf("ran %v, want 0 and 1 only", ran)
	}
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[3], ErrNotRun) || !b.NotRun(2) || !b.NotRun(3) || b.NotRun(1) {
		t.Errorf("errors %v", errs)
	}
	// The first never comes: none runs.
	ran, errs, _ = inTurn(t, context.Background(), []int{0, 0, 0}, map[int]bool{0: true})
	if len(ran) != 0 || !errors.Is(errs[1], ErrNotRun) || !errors.Is(errs[2], ErrNotRun) {
		t.Errorf("ran %v, errors %v", ran, errs)
	}
}

func TestBatchInTurnCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran, errs, _ := inTurn(t, ctx, []int{0, 0, 0}, nil)
	if len(ran) != 0 || !errors.Is(errs[0], ErrNotRun) || !errors.Is(errs[1], ErrNotRun) || !errors.Is(errs[2], ErrNotRun) {
		t.Errorf("ran %v, errors %v", ran, errs)
	}
}

// One goroutine runs the commands, each as soon as the one before ended:
// a command that came while another ran starts without its own
// goroutine being scheduled first.
func TestBatchInTurnOneRunner(t *testing.T) {
	b := NewBatchInTurn(3)
	var mu sync.Mutex
	runners := map[uint64]bool{}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			b.InTurn(context.Background(), i, func(context.Context) (Result, error) {
				mu.Lock()
				runners[goid()] = true
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				return Result{}, nil
			})
		})
	}
	wg.Wait()
	if len(runners) != 1 {
		t.Errorf("%d goroutines ran the commands, want 1", len(runners))
	}
	// A batch made by NewBatch takes no command in turn.
	if _, err := NewBatch(1).InTurn(context.Background(), 0, func(context.Context) (Result, error) {
		t.Error("ran")
		return Result{}, nil
	}); !errors.Is(err, ErrNotRun) {
		t.Errorf("NewBatch: %v", err)
	}
}

// goid is the calling goroutine's id, from its stack's first line.
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	id, _ := strconv.ParseUint(f[1], 10, 64)
	return id
}

// WithoutBatch hides the batch from the transport a command goes on to.
func TestWithoutBatch(t *testing.T) {
	ctx := WithBatch(context.Background(), NewBatch(1), 0)
	if b, _ := BatchOf(WithoutBatch(ctx)); b != nil {
		t.Error("the batch is still there")
	}
	if ctx := context.Background(); WithoutBatch(ctx) != ctx {
		t.Error("a context without a batch changed")
	}
}

// A batch run in turn that fewer commands took than it has slots ends
// at the first it did not (Abandon): its runner goroutine ends.
func TestBatchInTurnEndsAtAbandon(t *testing.T) {
	before := runtime.NumGoroutine()
	b := NewBatchInTurn(256)
	if b.Len() != 256 {
		t.Fatalf("Len %d", b.Len())
	}
	for i := range 2 {
		if _, err := b.InTurn(context.Background(), i, func(context.Context) (Result, error) { return Result{}, nil }); err != nil {
			t.Fatal(err)
		}
	}
	b.Abandon(2)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines, %d before: the runner did not end", n, before)
	}
	if _, err := b.InTurn(context.Background(), 3, func(context.Context) (Result, error) {
		t.Error("ran after the batch ended")
		return Result{}, nil
	}); !errors.Is(err, ErrNotRun) || !b.NotRun(3) {
		t.Errorf("after the end: %v", err)
	}
}
