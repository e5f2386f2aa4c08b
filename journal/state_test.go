package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// countingTree is memTree that counts the bytes it hands out.
type countingTree struct {
	memTree
	read int64
}

func (c *countingTree) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	n, err := c.memTree.ReadFile(ctx, p, &countW{w: w, n: &c.read})
	return n, err
}

type countW struct {
	w io.Writer
	n *int64
}

func (c *countW) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// TestStateBounded: the state of a file or tree over the bounds is
// TooLarge, found without reading much more than the bound (never the
// whole), and a tree within them still has its state.
func TestStateBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	b := StateBounds{FileBytes: 1 << 20, TreeBytes: 3 << 20, Entries: 8}
	ct := &countingTree{}
	if s, err := State(ctx, ct, big, b); err != nil || s != TooLarge {
		t.Errorf("a 4 MiB file, 1 MiB a file: %q %v, want %s", s, err, TooLarge)
	}
	if ct.read > 2<<20 {
		t.Errorf("read %d bytes of a 4 MiB file to find it over 1 MiB", ct.read)
	}
	tree := filepath.Join(dir, "t")
	mk := func(name string, size int) {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte("y"), size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/1", 1<<20)
	mk("a/2", 1<<20)
	if s, err := State(ctx, ct, tree, b); err != nil || !strings.HasPrefix(s, TreeStatePrefix) {
		t.Fatalf("a tree within the bounds: %q %v", s, err)
	}
	for what, grow := range map[string]func(){
		"a file over 1 MiB": func() { mk("a/3", 1<<20+1) },
		"over 3 MiB in all": func() { mk("a/3", 1<<20); mk("a/4", 1<<20) },
		"more than 8 entries": func() {
			for i := range 8 {
				mk(fmt.Sprintf("b/%d", i), 1)
			}
		},
	} {
		t.Run(what, func(t *testing.T) {
			os.RemoveAll(filepath.Join(tree, "a", "3"))
			os.RemoveAll(filepath.Join(tree, "a", "4"))
			os.RemoveAll(filepath.Join(tree, "b"))
			grow()
			ct.read = 0
			if s, err := State(ctx, ct, tree, b); err != nil || s != TooLarge {
				t.Errorf("%q %v, want %s", s, err, TooLarge)
			}
			if ct.read > b.TreeBytes {
				t.Errorf("read %d bytes, more than the tree bound %d", ct.read, b.TreeBytes)
			}
		})
	}
}

// TestUndoRefusesTooLarge: a tree the session left over the bounds, or
// that grew over them since (more entries than MaxTreeEntries), is refused
// with a message saying why whether it changed cannot be told; --force
// restores it, a tree over the entry bound removed whole and rebuilt.
func TestUndoRefusesTooLarge(t *testing.T) {
	ctx := context.Background()
	for _, left := range []string{"over the bounds", "as saved"} {
		t.Run(left, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "d")
			if err := os.MkdirAll(filepath.Join(root, "s"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "s", "f"), []byte("keep\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			before := dirState(t, root)
			j, err := Open(t.TempDir(), "s1", "h")
			if err != nil {
				t.Fatal(err)
			}
			l, err := memTree{}.ListTree(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.RecordTree(ctx, root, l.Entries, func(ctx context.Context, p string, w io.Writer) error {
				_, err := memTree{}.ReadFile(ctx, p, w)
				return err
			}, ""); err != nil {
				t.Fatal(err)
			}
			// The session's change, then newer work that puts the tree
			// over the entry bound.
			if err := os.RemoveAll(filepath.Join(root, "s")); err != nil {
				t.Fatal(err)
			}
			after, err := State(ctx, memTree{}, root, j.Bounds())
			if err != nil {
				t.Fatal(err)
			}
			if left == "over the bounds" {
				after = TooLarge
			}
			if err := j.Changed(ctx, root, after); err != nil {
				t.Fatal(err)
			}
			if left == "as saved" { // newer work: more entries than the bound (xargs touch: fast)
				touch := exec.Command("/bin/sh", "-c", fmt.Sprintf("seq 0 %d | xargs touch", MaxTreeEntries))
				touch.Dir = root
				if out, err := touch.CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
			} else if err := os.WriteFile(filepath.Join(root, "0"), []byte("newer"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = j.Restore(ctx, dirRestorer{})
			var ce *ChangedError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "more than undo compares") || !strings.Contains(err.Error(), root) {
				t.Fatalf("undo of a tree over the bounds: %v, want it refused saying why", err)
			}
			if _, err := os.Stat(filepath.Join(root, "0")); err != nil {
				t.Fatalf("a refused undo changed the tree: %v", err)
			}
			if _, err := j.RestoreWith(ctx, dirRestorer{}, RestoreOptions{Force: true}); err != nil {
				t.Fatalf("forced: %v", err)
			}
			if got := dirState(t, root); got != before {
				t.Errorf("forced undo left %s, want %s", got, before)
			}
		})
	}
}

func dirState(t *testing.T, root string) string {
	t.Helper()
	s, err := State(context.Background(), memTree{}, root, StateBounds{Entries: 2 * MaxTreeEntries})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dirRestorer is a TreeRestorer over the real file system.
type dirRestorer struct{ memTree }

func (dirRestorer) WriteFile(_ context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func (dirRestorer) Remove(_ context.Context, p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d dirRestorer) RemoveDir(ctx context.Context, p string) error { return d.Remove(ctx, p) }

func (dirRestorer) Chmod(_ context.Context, p string, m fs.FileMode) error { return os.Chmod(p, m) }

func (dirRestorer) Mkdir(_ context.Context, p string, m fs.FileMode) error { return os.Mkdir(p, m) }

func (dirRestorer) Symlink(_ context.Context, target, p string) error { return os.Symlink(target, p) }

func (dirRestorer) RemoveAll(_ context.Context, p string) error { return os.RemoveAll(p) }

var _ TreeRestorer = dirRestorer{}

// statTree is memTree that can Stat, as the transports can.
type statTree struct{ memTree }

func (statTree) Stat(_ context.Context, p string) (fs.FileInfo, error) { return os.Stat(p) }

type countingStatTree struct{ countingTree }

func (*countingStatTree) Stat(_ context.Context, p string) (fs.FileInfo, error) { return os.Stat(p) }

// TestLargeState: a file over the per-file bound, read through a reader
// that can Stat it, has a "large:" state of its size, time and first
// bytes, read without reading the whole; a change of any of them changes
// it; a tree holding such a file is still TooLarge.
func TestLargeState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, bytes.Repeat([]byte("x"), 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	b := StateBounds{FileBytes: 1 << 20}
	ct := &countingStatTree{}
	s1, err := State(ctx, ct, f, b)
	if err != nil || !strings.HasPrefix(s1, LargeStatePrefix) || !validState(s1) {
		t.Fatalf("a 4 MiB file: %q %v", s1, err)
	}
	if n, ok := LargeSize(s1); !ok || n != 4<<20 {
		t.Errorf("LargeSize(%q) = %d %v", s1, n, ok)
	}
	if ct.read > 2<<20 {
		t.Errorf("read %d bytes of a 4 MiB file", ct.read)
	}
	same, err := State(ctx, statTree{}, f, b)
	if err != nil || same != s1 {
		t.Errorf("again: %q %v, want %q", same, err, s1)
	}
	for what, change := range map[string]func(){
		"first bytes": func() {
			fh, _ := os.OpenFile(f, os.O_WRONLY, 0)
			fh.WriteAt([]byte("y"), 10)
			fh.Close()
		},
		"size": func() { os.Truncate(f, 3<<20) },
		"time": func() { os.Chtimes(f, time.Unix(1, 0), time.Unix(1, 0)) },
	} {
		before, _ := os.Stat(f)
		change()
		if what != "time" { // the time kept: only what is named changed
			os.Chtimes(f, before.ModTime(), before.ModTime())
		}
		if s, err := State(ctx, statTree{}, f, b); err != nil || s == same {
			t.Errorf("%s changed: %q %v, want a new state", what, s, err)
		}
		os.WriteFile(f, bytes.Repeat([]byte("x"), 4<<20), 0o644)
		os.Chtimes(f, before.ModTime(), before.ModTime())
		if s, _ := State(ctx, statTree{}, f, b); s != same {
			t.Fatalf("%s put back: %q, want %q", what, s, same)
		}
	}
	if s, err := State(ctx, statTree{}, dir, b); err != nil || s != TooLarge {
		t.Errorf("a tree holding it: %q %v, want %s", s, err, TooLarge)
	}
}

func FuzzLargeSize(f *testing.F) {
	f.Add(largeState(5, 7, strings.Repeat("ab", 32)))
	f.Add("large:-1:0:" + strings.Repeat("ab", 32))
	f.Add("large:1:x:" + strings.Repeat("ab", 32))
	f.Add("large:1:2:ab")
	f.Add("large:")
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := LargeSize(s)
		if !ok {
			return
		}
		if n < 0 || !validState(s) || !strings.HasPrefix(s, LargeStatePrefix) {
			t.Fatalf("LargeSize(%q) = %d, true", s, n)
		}
	})
}
