//go:build linux

package local

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/transport"
)

// lockedRun runs c through tr on a goroutine locked to its own thread, as
// a local step's confined thread runs it, and returns the goroutines
// created meanwhile beside that one.
func lockedRun(t *testing.T, tr *Transport, c transport.Command) (transport.Result, uint64) {
	t.Helper()
	sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	var res transport.Result
	var err error
	done := make(chan struct{})
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		res, err = tr.Run(context.Background(), c)
	}()
	<-done
	metrics.Read(sample)
	if err != nil {
		t.Fatalf("%q: %v", c.Command, err)
	}
	return res, sample[0].Value.Uint64() - before - 1
}

// TestRunSilentStartsNoGoroutine: a command that prints nothing is
// started, read and reaped by the thread that runs it — no goroutine, no
// hand-off between threads on the way from its end to the next command
// (os/exec started three a command: a copy of each pipe, the context's
// watch). One that prints gets one goroutine, which writes its output
// off that thread (a confined thread runs no work of agent's own).
func TestRunSilentStartsNoGoroutine(t *testing.T) {
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	for _, c := range []struct {
		cmd        string
		goroutines uint64
		stdout     string
	}{
		{"true", 0, ""},
		{"exit 3", 0, ""},
		{"cat", 0, ""}, // its stdin is /dev/null: at its end at once
		{"echo out; echo err >&2", 1, "out\n"},
	} {
		// Timeout: a context with a deadline, as a step's.
		cmd := transport.Command{Command: c.cmd, Stdout: &out, Stderr: &errOut, Timeout: time.Minute}
		var min uint64 = 1 << 62
		var res transport.Result
		for range 3 { // another test's goroutine may start meanwhile: the least of three
			var n uint64
			out.Reset()
			errOut.Reset()
			res, n = lockedRun(t, tr, cmd)
			min = minOf(min, n)
		}
		if min != c.goroutines {
			t.Errorf("%q: %d goroutines started, want %d", c.cmd, min, c.goroutines)
		}
		if res.Stdout != c.stdout || out.String() != c.stdout {
			t.Errorf("%q: stdout %q, streamed %q, want %q", c.cmd, res.Stdout, out.String(), c.stdout)
		}
		if c.cmd == "exit 3" && res.ExitCode != 3 {
			t.Errorf("exit 3: status %d", res.ExitCode)
		}
	}
	if errOut.String() != "err\n" {
		t.Errorf("stderr streamed %q", errOut.String())
	}
}

func minOf(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// TestRunOutputHeldByEscapee: a process that left the command's group
// and holds its output pipe does not hold Run past waitDelay after the
// command ended (os/exec's WaitDelay), and what the command printed is
// kept.
func TestRunOutputHeldByEscapee(t *testing.T) {
	old := waitDelay
	waitDelay = 200 * time.Millisecond
	defer func() { waitDelay = old }()
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res, err := tr.Run(context.Background(), transport.Command{
		Command: "setsid sh -c 'echo $$ > " + pidFile + "; exec sleep 30' & echo started",
	})
	took := time.Since(start)
	if b, rerr := os.ReadFile(pidFile); rerr == nil {
		var pid int
		for _, c := range strings.TrimSpace(string(b)) {
			pid = pid*10 + int(c-'0')
		}
		if p, ferr := os.FindProcess(pid); ferr == nil && pid > 1 {
			p.Kill()
		}
	}
	if err != nil || res.ExitCode != 0 || res.Stdout != "started\n" {
		t.Fatalf("%+v %v", res, err)
	}
	if took > 10*time.Second {
		t.Fatalf("Run took %v: held by the escapee's pipe", took)
	}
}

// slowWriter takes its time over each write, as a step's writers do on a
// loaded machine (the redactor's sender, a busy scheduler).
type slowWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestRunKeepsOutputPastWaitDelay: what a command wrote before it ended
// is read in full however late its reader gets to it: waitDelay bounds
// the wait for a pipe held open, never the reading of what is already in
// it. On a loaded machine a reader more than waitDelay behind lost the
// end of the output (the leak corpus's script 111: `… | rev` cut in the
// middle of a secret, whose first half then went to the model). Both
// ways a command starts: without os/exec, and through it (stdin given).
func TestRunKeepsOutputPastWaitDelay(t *testing.T) {
	old := waitDelay
	waitDelay = time.Nanosecond // the reader is always "too late"
	defer func() { waitDelay = old }()
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	for _, stdin := range []bool{false, true} {
		for _, stream := range []bool{false, true} {
			c := transport.Command{Command: "head -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' a; printf END", CaptureLimit: 2 * n}
			if stdin {
				c.Stdin = strings.NewReader("")
			}
			var w slowWriter
			if stream {
				c.Stdout = &w
			}
			res, err := tr.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Stdout) != n+3 || !strings.HasSuffix(res.Stdout, "END") {
				t.Errorf("stdin %v, streamed %v: %d bytes read of %d, ends %q", stdin, stream, len(res.Stdout), n+3, res.Stdout[max(0, len(res.Stdout)-8):])
			}
			if stream && w.b.String() != res.Stdout {
				t.Errorf("stdin %v: %d bytes streamed, %d captured", stdin, w.b.Len(), len(res.Stdout))
			}
		}
	}
}
