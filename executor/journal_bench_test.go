package executor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoshell/agent/journal"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// BenchmarkShellJournal is the cost of journaling a shell command's files
// before it runs, locally: the same step with the undo journal (journaled)
// and without (plain, the peer), for one file of 1 KiB to 64 MiB that
// `cp` overwrites, and for directory trees that `chmod -R` changes. The
// difference is the journal's per-step cost; MB/s is the bytes saved.
func BenchmarkShellJournal(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("file-%s", sizeName(size)), func(b *testing.B) {
			dir := b.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			content := bytes.Repeat([]byte("0123456789abcdef"), size/16)
			for _, p := range []string{src, dst} {
				if err := os.WriteFile(p, content, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			benchStep(b, "cp "+src+" "+dst, int64(size))
		})
	}
	for _, tc := range []struct{ files, size int }{{64, 16 << 10}, {1024, 1 << 10}} {
		b.Run(fmt.Sprintf("tree-%dx%s", tc.files, sizeName(tc.size)), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "tree")
			content := bytes.Repeat([]byte("x"), tc.size)
			for i := range tc.files {
				sub := filepath.Join(dir, fmt.Sprint(i%16))
				if err := os.MkdirAll(sub, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprint(i)), content, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			benchStep(b, "chmod -R u+w "+dir, int64(tc.files*tc.size))
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// benchStep runs cmd once per iteration, journaled in a fresh session (a
// journal saves a file's first state only) and plain.
func benchStep(b *testing.B, cmd string, bytes int64) {
	tr, err := local.New()
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	step := planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}}
	ctx := context.Background()
	for _, journaled := range []bool{true, false} {
		name := "plain"
		if journaled {
			name = "journaled"
		}
		b.Run(name, func(b *testing.B) {
			state := b.TempDir()
			b.SetBytes(bytes)
			for i := 0; b.Loop(); i++ {
				var j *journal.Journal
				if journaled {
					b.StopTimer()
					if j, err = journal.Open(state, fmt.Sprintf("b%d", i), "local"); err != nil {
						b.Fatal(err)
					}
					j.MaxBytes = 64 << 20
					b.StartTimer()
				}
				e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil), Journal: j})
				r, err := e.RunStep(ctx, step)
				if err != nil || r.Status != "ok" || journaled && len(r.Journaled) == 0 {
					b.Fatalf("%s: %v %s %v %s", cmd, err, r.Status, r.Journaled, r.Observation)
				}
				if journaled {
					b.StopTimer()
					os.RemoveAll(filepath.Join(state, "sessions"))
					b.StartTimer()
				}
			}
		})
	}
}
