package ssh

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// runBatch runs cmds as one batch, each from a goroutine of its own as
// the executor's steps do, and returns their results and errors.
func runBatch(ctx context.Context, tr transport.Transport, cmds ...string) ([]transport.Result, []error, *transport.Batch) {
	b := transport.NewBatch(len(cmds))
	res, errs := make([]transport.Result, len(cmds)), make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = tr.Run(transport.WithBatch(ctx, b, i), transport.Command{Command: c})
		}()
	}
	wg.Wait()
	return res, errs, b
}

// TestBatch: a batch's commands run in order, their outputs apart; a
// command that fails stops those after it (not run), on the served worker
// (one write) and on the shell worker (one after the other) alike.
func TestBatch(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	for _, served := range []bool{true, false} {
		t.Run(map[bool]string{true: "served", false: "shell"}[served], func(t *testing.T) {
			tr := dial(t, hostConfig(h.Host), Options{})
			if served {
				tr.ServeWorker(serveArgv())
			}
			dir := t.TempDir()
			ctx := context.Background()
			res, errs, b := runBatch(ctx, tr, "echo one; echo e1 >&2; touch "+dir+"/1", "test -e "+dir+"/1 && echo two", "echo three; exit 0")
			for i, want := range []string{"one\n", "two\n", "three\n"} {
				if errs[i] != nil || res[i].Stdout != want || res[i].ExitCode != 0 || b.NotRun(i) {
					t.Errorf("command %d: %+v, %v", i+1, res[i], errs[i])
				}
			}
			if res[0].Stderr != "e1\n" {
				t.Errorf("command 1's stderr: %q", res[0].Stderr)
			}
			res, errs, b = runBatch(ctx, tr, "echo a", "echo b; exit 4", "touch "+dir+"/3", "touch "+dir+"/4")
			if errs[0] != nil || errs[1] != nil || res[1].ExitCode != 4 || res[1].Stdout != "b\n" {
				t.Errorf("commands 1 and 2: %+v %v, %+v %v", res[0], errs[0], res[1], errs[1])
			}
			for i := 2; i < 4; i++ {
				if !errors.Is(errs[i], transport.ErrNotRun) || !b.NotRun(i) {
					t.Errorf("command %d after a failed one: %+v, %v", i+1, res[i], errs[i])
				}
			}
			for _, f := range []string{"3", "4"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("file %s: a command after a failed one ran", f)
				}
			}
			// The worker goes on with the next command alone.
			if out := runOK(t, tr, transport.Command{Command: "echo after"}).Stdout; out != "after\n" {
				t.Errorf("after the batch: %q", out)
			}
			if served {
				if comm, _ := os.ReadFile("/proc/" + strings.TrimSpace(runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout) + "/cmdline"); !strings.Contains(string(comm), confine.ServeFlag) {
					t.Errorf("not the served worker: %q", comm)
				}
			}
		})
	}
}

// TestBatchInterrupted: a batch whose ctx ends while its first command
// runs has that command's group killed and runs nothing after it.
func TestBatchInterrupted(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	tr.ServeWorker(serveArgv())
	dir := t.TempDir()
	marker := filepath.Join(dir, "agentbatchsleep")
	os.Symlink("/bin/sleep", marker)
	ctx, cancel := context.WithCancel(context.Background())
	// cancelled once the first command runs (a fixed delay lost to a
	// loaded machine's slow start: the first was then not run at all)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if exec.Command("pgrep", "-f", marker).Run() == nil {
				break
			}
		}
		cancel()
	}()
	start := time.Now()
	res, errs, b := runBatch(ctx, tr, marker+" 30", "touch "+dir+"/2", "touch "+dir+"/3")
	if !errors.Is(errs[0], context.Canceled) || b.NotRun(0) {
		t.Errorf("the first: %+v, %v", res[0], errs[0])
	}
	for i := 1; i < 3; i++ {
		if !b.NotRun(i) {
			t.Errorf("command %d: %v, want not run", i+1, errs[i])
		}
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("took %v", d)
	}
	waitGone(t, marker)
	for _, f := range []string{"2", "3"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("file %s: a command ran after the batch was interrupted", f)
		}
	}
}
