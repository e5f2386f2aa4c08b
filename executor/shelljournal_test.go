package executor

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// TestShellUndoOverCapIsHigh: a medium command writing a file larger than
// the undo journal keeps is high (undo could not take it back), and one
// under the cap stays medium with the file journaled.
func TestShellUndoOverCapIsHigh(t *testing.T) {
	h := newHarness(t)
	f := h.write("big.log", strings.Repeat("x", 100))
	h.jrnl.MaxBytes = 50
	e := h.executor(safety.ModeMedium, false, nil)
	r, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo y >> " + f}})
	if err != nil || r.Risk.Level != safety.High || r.Status != "denied" || !strings.Contains(strings.Join(r.Risk.Reasons, ";"), "more than the undo journal keeps") {
		t.Fatalf("over the cap: %v %s %s %v", err, r.Risk.Level, r.Status, r.Risk.Reasons)
	}
	h.jrnl.MaxBytes = 1000
	r, err = e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo y >> " + f}})
	if err != nil || r.Risk.Level != safety.Medium || r.Status != "ok" || len(r.Journaled) != 1 {
		t.Fatalf("under the cap: %v %s %s %v", err, r.Risk.Level, r.Status, r.Journaled)
	}
}

// TestShellUndoAfterStateBounded: what a command leaves over the
// journal's bounds (cp -r of a tree holding a file above the per-file cap
// into a new directory) is not hashed whole: its state is TooLarge, the
// step says undo will refuse it, and undo refuses it without --force.
func TestShellUndoAfterStateBounded(t *testing.T) {
	h := newHarness(t)
	if err := os.Mkdir(filepath.Join(h.dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("src/big", strings.Repeat("x", 4096))
	h.jrnl.MaxBytes = 1000
	e := h.executor(safety.ModeMedium, false, nil)
	dst := filepath.Join(h.dir, "dst")
	r, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command",
		Parameters: map[string]any{"command": "cp -r " + filepath.Join(h.dir, "src") + " " + dst}})
	if err != nil || r.Status != "ok" || r.Risk.Level != safety.Medium {
		t.Fatalf("cp -r: %v %s %s %v", err, r.Status, r.Risk.Level, r.Risk.Reasons)
	}
	if !strings.Contains(r.Observation, "more than undo compares") {
		t.Errorf("observation %q does not say undo cannot compare %s", r.Observation, dst)
	}
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.jrnl.Restore(context.Background(), lookOnly{hostTree{tr}})
	var ce *journal.ChangedError
	if !errors.As(err, &ce) || ce.Path != dst || !strings.Contains(err.Error(), "more than undo compares") {
		t.Fatalf("undo: %v, want %s refused as over the bounds", err, dst)
	}
	if _, err := os.Stat(filepath.Join(dst, "big")); err != nil {
		t.Fatalf("a refused undo removed %s: %v", dst, err)
	}
}

// lookOnly is a restorer that can only look: undo must refuse before it
// writes anything.
type lookOnly struct{ hostTree }

var errLookOnly = errors.New("look-only restorer: nothing may be written")

func (lookOnly) WriteFile(context.Context, string, io.Reader, fs.FileMode) (int64, error) {
	return 0, errLookOnly
}
func (lookOnly) Remove(context.Context, string) error             { return errLookOnly }
func (lookOnly) RemoveDir(context.Context, string) error          { return errLookOnly }
func (lookOnly) Chmod(context.Context, string, fs.FileMode) error { return errLookOnly }

// TestShellUndoAppendPastCap: a medium step that appends past the
// journal's per-file cap to a file under it (`seq 1 40000 >> f`, as `yes | head -c 200M >> f`) is
// undone byte for byte — the journal saved the whole file before, and the
// size, time and first bytes it left tell it from a later change, which
// undo refuses without --force.
func TestShellUndoAppendPastCap(t *testing.T) {
	for _, later := range []bool{false, true} {
		t.Run(map[bool]string{false: "as left", true: "changed later"}[later], func(t *testing.T) {
			h := newHarness(t)
			orig := "line one\nline two\n"
			f := h.write("f", orig)
			h.jrnl.MaxBytes = 1000
			e := h.executor(safety.ModeMedium, false, nil)
			r, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command",
				Parameters: map[string]any{"command": "seq 1 40000 >> " + f}})
			if err != nil || r.Status != "ok" || r.Risk.Level != safety.Medium || len(r.Journaled) != 1 {
				t.Fatalf("append: %v %s %s %v %v", err, r.Status, r.Risk.Level, r.Risk.Reasons, r.Journaled)
			}
			if strings.Contains(r.Observation, "refuses it without --force") {
				t.Errorf("observation %q: undo can take an append back", r.Observation)
			}
			if fi, err := os.Stat(f); err != nil || fi.Size() != int64(len(orig))+228894 {
				t.Fatalf("after the step: %v %v", fi, err)
			}
			tr, err := local.New()
			if err != nil {
				t.Fatal(err)
			}
			if later {
				// A later change past the first bytes, of another size.
				if err := os.WriteFile(f+".tmp", []byte(h.read(f)+"newer\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(f+".tmp", f); err != nil {
					t.Fatal(err)
				}
				_, err := h.jrnl.Restore(context.Background(), lookOnly{hostTree{tr}})
				var ce *journal.ChangedError
				if !errors.As(err, &ce) || ce.Path != f {
					t.Fatalf("undo after a later change: %v, want %s refused", err, f)
				}
				return
			}
			if _, err := h.jrnl.Restore(context.Background(), statRestorer{}); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if got := h.read(f); got != orig {
				t.Errorf("undo left %d bytes, want the original %d byte for byte", len(got), len(orig))
			}
		})
	}
}

// statRestorer is restorer that can Stat and list, as engine's undo
// restorer over a transport.
type statRestorer struct{ restorer }

func (statRestorer) Stat(_ context.Context, p string) (fs.FileInfo, error) { return os.Stat(p) }
func (statRestorer) ListTree(ctx context.Context, root string) (journal.TreeListing, error) {
	tr, err := local.New()
	if err != nil {
		return journal.TreeListing{}, err
	}
	return ListTree(ctx, tr, root)
}
func (statRestorer) Mkdir(_ context.Context, p string, m fs.FileMode) error { return os.Mkdir(p, m) }
func (statRestorer) Symlink(_ context.Context, target, p string) error      { return os.Symlink(target, p) }
func (statRestorer) RemoveAll(_ context.Context, p string) error            { return os.RemoveAll(p) }
