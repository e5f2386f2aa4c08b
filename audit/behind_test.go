package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAppendBehind: the line returns before its fsync ends; the next
// step's started line is written without waiting for it, and CaughtUp,
// which the step waits for before it runs, returns once it ended (a step
// never starts before the line of the one before is on disk); a synced
// append and Close wait too.
func TestAppendBehind(t *testing.T) {
	a, err := Open(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var synced atomic.Int64 // fsyncs finished
	old := syncFile
	syncFile = func(f *os.File) error {
		time.Sleep(100 * time.Millisecond) // a slow disk
		err := old(f)
		synced.Add(1)
		return err
	}
	t.Cleanup(func() { syncFile = old })
	ctx := context.Background()
	start := time.Now()
	if err := a.AppendBehind(ctx, Entry{Session: "s", Tool: "t", Decision: Allowed}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 50*time.Millisecond || synced.Load() != 0 {
		t.Fatalf("AppendBehind waited for its fsync (%v, %d done)", d, synced.Load())
	}
	if err := a.AppendUnsynced(ctx, Entry{Session: "s", Tool: "t", Decision: Started}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("the started line waited for the fsync behind (%v)", d)
	}
	if err := a.CaughtUp(); err != nil {
		t.Fatal(err)
	}
	if synced.Load() < 1 {
		t.Fatal("CaughtUp returned before the line behind was on disk")
	}
	if err := a.AppendBehind(ctx, Entry{Session: "s", Tool: "t", Decision: Allowed}); err != nil {
		t.Fatal(err)
	}
	n := synced.Load()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if synced.Load() <= n {
		t.Error("Close did not wait for the last line's fsync")
	}
}

// TestAppendBehindFails: an fsync that fails behind fails every later
// append and Close: nothing more runs on a log that lost a line.
func TestAppendBehindFails(t *testing.T) {
	a, err := Open(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	bad := errors.New("EIO")
	old := syncFile
	syncFile = func(*os.File) error { return bad }
	t.Cleanup(func() { syncFile = old })
	ctx := context.Background()
	if err := a.AppendBehind(ctx, Entry{Session: "s", Tool: "t", Decision: Allowed}); err != nil {
		t.Fatal(err)
	}
	err = a.AppendUnsynced(ctx, Entry{Session: "s", Tool: "t", Decision: Started})
	if err == nil { // written while the fsync behind was failing
		err = a.CaughtUp()
	}
	if !errors.Is(err, bad) {
		t.Errorf("the next step: %v, want the fsync's error", err)
	}
	if err := a.AppendUnsynced(ctx, Entry{Session: "s", Tool: "t", Decision: Started}); !errors.Is(err, bad) {
		t.Errorf("a started line after it: %v, want the fsync's error", err)
	}
	if err := a.Append(ctx, Entry{Session: "s", Tool: "t", Decision: Allowed}); !errors.Is(err, bad) {
		t.Errorf("a later line: %v, want the fsync's error", err)
	}
	if err := a.Close(); !errors.Is(err, bad) {
		t.Errorf("Close: %v, want the fsync's error", err)
	}
}

// TestAppendDeferred: deferred lines start no fsync of their own; the
// next CaughtUp puts them all on disk in one, and Close the ones after.
func TestAppendDeferred(t *testing.T) {
	a, err := Open(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var synced atomic.Int64
	old := syncFile
	syncFile = func(f *os.File) error {
		synced.Add(1)
		return old(f)
	}
	t.Cleanup(func() { syncFile = old })
	ctx := context.Background()
	for range 5 {
		if err := a.AppendDeferred(ctx, Entry{Session: "s", Tool: "t", Decision: Allowed}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if n := synced.Load(); n != 0 {
		t.Fatalf("%d fsyncs for deferred lines before CaughtUp", n)
	}
	if err := a.CaughtUp(); err != nil {
		t.Fatal(err)
	}
	if n := synced.Load(); n != 1 {
		t.Fatalf("CaughtUp: %d fsyncs for 5 deferred lines, want 1", n)
	}
	if err := a.CaughtUp(); err != nil || synced.Load() != 1 {
		t.Fatalf("CaughtUp again: %v, %d fsyncs", err, synced.Load())
	}
	if err := a.AppendDeferred(ctx, Entry{Session: "s", Tool: "t", Decision: Allowed}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil || synced.Load() != 2 {
		t.Errorf("Close: %v, %d fsyncs (want the last line's)", err, synced.Load())
	}
	b, _ := os.ReadFile(a.Path())
	if n := len(splitLines(b)); n != 6 {
		t.Errorf("%d lines, want 6", n)
	}
}

func splitLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
