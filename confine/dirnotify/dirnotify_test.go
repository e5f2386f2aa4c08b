//go:build linux

package dirnotify

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

func newWatcher(t *testing.T) *Watcher {
	t.Helper()
	w, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// changes is one Changes call on dirs, the names sorted, each renamed
// away marked with a trailing ">".
func changes(w *Watcher, dirs ...string) (map[string][]string, map[string]bool) {
	ents, unknown := w.Changes(dirs)
	var names map[string][]string
	for d, es := range ents {
		if names == nil {
			names = map[string][]string{}
		}
		for _, e := range es {
			n := e.Name
			if e.Away {
				n += ">"
			}
			names[d] = append(names[d], n)
		}
		slices.Sort(names[d])
	}
	return names, unknown
}

// TestChanges: a directory is unknown until watched; then each entry
// made, removed or renamed is reported once, by name, and nothing else.
func TestChanges(t *testing.T) {
	d, other := t.TempDir(), t.TempDir()
	w := newWatcher(t)
	if _, unknown := changes(w, d); !unknown[d] {
		t.Fatal("a directory not watched before is not unknown")
	}
	if names, unknown := changes(w, d); len(names) != 0 || len(unknown) != 0 {
		t.Fatalf("nothing changed: %v %v", names, unknown)
	}
	must(t, os.WriteFile(filepath.Join(d, "a"), nil, 0o600))
	must(t, os.Mkdir(filepath.Join(d, "b"), 0o700))
	must(t, os.Symlink("/etc", filepath.Join(d, "c")))
	must(t, os.WriteFile(filepath.Join(d, "a"), []byte("written, not an entry change"), 0o600))
	must(t, os.WriteFile(filepath.Join(d, "b", "inside"), nil, 0o600)) // b's entries, not d's
	names, unknown := changes(w, d)
	if len(unknown) != 0 || !slices.Equal(names[d], []string{"a", "b", "c"}) {
		t.Fatalf("made a, b, c: %v %v", names, unknown)
	}
	must(t, os.Remove(filepath.Join(d, "a")))
	must(t, os.Rename(filepath.Join(d, "c"), filepath.Join(d, "d")))
	must(t, os.Rename(filepath.Join(d, "b"), filepath.Join(other, "b")))
	must(t, os.WriteFile(filepath.Join(other, "e"), nil, 0o600))
	must(t, os.Rename(filepath.Join(other, "e"), filepath.Join(d, "e")))
	if names, unknown = changes(w, d); len(unknown) != 0 || !slices.Equal(names[d], []string{"a", "b>", "c>", "d", "e"}) {
		t.Fatalf("removed a, renamed c to d, moved b out and e in: %v %v", names, unknown)
	}
	if names, unknown = changes(w, d); len(names) != 0 || len(unknown) != 0 {
		t.Fatalf("reported twice: %v %v", names, unknown)
	}
}

// TestChangesUnknownWhenReplaced: a directory renamed away, with another
// made at its path, is unknown (its path no longer names the watched
// one), then watched anew; so is one whose path's link leads elsewhere
// now, and every directory after Close.
func TestChangesUnknownWhenReplaced(t *testing.T) {
	base := t.TempDir()
	d := filepath.Join(base, "d")
	must(t, os.Mkdir(d, 0o700))
	w := newWatcher(t)
	changes(w, d)
	must(t, os.Rename(d, filepath.Join(base, "old")))
	must(t, os.Mkdir(d, 0o700))
	if _, unknown := changes(w, d); !unknown[d] {
		t.Fatal("a replaced directory is not unknown")
	}
	must(t, os.WriteFile(filepath.Join(d, "new"), nil, 0o600))
	must(t, os.WriteFile(filepath.Join(base, "old", "not-d"), nil, 0o600))
	if names, unknown := changes(w, d); len(unknown) != 0 || !slices.Equal(names[d], []string{"new"}) {
		t.Fatalf("the new directory's entries: %v %v", names, unknown)
	}

	l := filepath.Join(base, "link")
	must(t, os.Symlink(filepath.Join(base, "old"), l))
	changes(w, l)
	must(t, os.Remove(l))
	must(t, os.Symlink(d, l))
	if _, unknown := changes(w, l); !unknown[l] {
		t.Fatal("a link leading elsewhere now is not unknown")
	}

	must(t, os.RemoveAll(d))
	if _, unknown := changes(w, d); !unknown[d] {
		t.Fatal("a removed directory is not unknown")
	}
	w.Close()
	if _, unknown := changes(w, l); !unknown[l] {
		t.Fatal("after Close a directory is not unknown")
	}
}

// TestChangesForgetsDirectoriesNotAsked: a directory left out of a call
// is no longer watched: asked about again, it is unknown.
func TestChangesForgetsDirectoriesNotAsked(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	w := newWatcher(t)
	changes(w, a, b)
	changes(w, a)
	must(t, os.WriteFile(filepath.Join(b, "x"), nil, 0o600))
	if _, unknown := changes(w, a, b); !unknown[b] || unknown[a] {
		t.Fatalf("unknown %v: want b alone", unknown)
	}
	if len(w.wds) != 2 {
		t.Errorf("%d watches, want 2", len(w.wds))
	}
}

// TestChangesOverflow: events the kernel dropped (its queue full) make
// every directory unknown.
func TestChangesOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the inotify queue")
	}
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip(err)
	}
	var max int
	for _, c := range b {
		if c >= '0' && c <= '9' {
			max = max*10 + int(c-'0')
		}
	}
	if max > 1<<16 {
		t.Skipf("max_queued_events %d: too many files to make", max)
	}
	d, quiet := t.TempDir(), t.TempDir()
	w := newWatcher(t)
	changes(w, d, quiet)
	f := filepath.Join(d, "f")
	for i := 0; i <= max/2+1; i++ {
		must(t, os.WriteFile(f, nil, 0o600))
		must(t, os.Remove(f))
	}
	if _, unknown := changes(w, d, quiet); !unknown[d] || !unknown[quiet] {
		t.Fatalf("after an overflow: unknown %v, want both", unknown)
	}
}

// TestParseBadEvents: a truncated or garbled read loses track of every
// directory rather than reading past its end.
func TestParseBadEvents(t *testing.T) {
	d := t.TempDir()
	w := newWatcher(t)
	changes(w, d)
	ev := make([]byte, unix.SizeofInotifyEvent)
	binary.NativeEndian.PutUint32(ev[12:], 1000) // a name longer than the read
	w.parse(ev)
	if _, unknown := changes(w, d); !unknown[d] {
		t.Fatal("a truncated event did not lose track")
	}
}

func FuzzParse(f *testing.F) {
	ev := make([]byte, unix.SizeofInotifyEvent+8)
	binary.NativeEndian.PutUint32(ev[0:], 1)
	binary.NativeEndian.PutUint32(ev[4:], unix.IN_CREATE)
	binary.NativeEndian.PutUint32(ev[12:], 8)
	copy(ev[unix.SizeofInotifyEvent:], "name\x00\x00\x00\x00")
	f.Add(ev)
	f.Add([]byte{})
	f.Add(make([]byte, 15))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := &Watcher{fd: -1, dirs: map[string]*dir{}, wds: map[int32][]*dir{}}
		d := &dir{path: "/d", wd: 1, names: map[string]bool{}}
		w.dirs["/d"], w.wds[1] = d, []*dir{d}
		w.parse(b)
		for n := range d.names {
			if n == "" || len(n) > len(b) {
				t.Fatalf("name %q from %d bytes", n, len(b))
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
