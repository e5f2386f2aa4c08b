//go:build linux

package dirnotify

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// chain is p and each of its parents up to /, parents first.
func chain(p string) []string {
	var out []string
	for ; p != "/"; p = filepath.Dir(p) {
		out = append([]string{p}, out...)
	}
	return append([]string{"/"}, out...)
}

// quiet asks about dirs until a call reports nothing (another job's
// file in /tmp may name a parent meanwhile) and returns how many
// identities that call stated.
func quiet(t *testing.T, w *Watcher, dirs []string) int {
	t.Helper()
	for try := 0; try < 20; try++ {
		before := w.stated
		if names, unknown := changes(w, dirs...); len(names) == 0 && len(unknown) == 0 {
			return w.stated - before
		}
	}
	t.Fatal("twenty calls in a row reported changes")
	return 0
}

// TestChangesHeldByParents: a directory asked about with every parent up
// to / is vouched for by its parents' watches — no stat — while nothing
// names it; renamed away with another put at its path, made a link to
// another directory, or a parent of it so, it is unknown.
func TestChangesHeldByParents(t *testing.T) {
	base := t.TempDir()
	b := filepath.Join(base, "a", "b")
	must(t, os.MkdirAll(b, 0o700))
	must(t, os.MkdirAll(filepath.Join(base, "other", "b"), 0o700))
	dirs := chain(b)
	w := newWatcher(t)
	changes(w, dirs...)
	quiet(t, w, dirs) // each stated once more: known after its parents' watches
	if n := quiet(t, w, dirs); n != 0 {
		t.Fatalf("nothing changed: %d of %d directories stated", n, len(dirs))
	}
	// b replaced: its parent's watch names it.
	must(t, os.Rename(b, filepath.Join(base, "b-old")))
	must(t, os.Mkdir(b, 0o700))
	if _, unknown := changes(w, dirs...); !unknown[b] {
		t.Fatal("b replaced by another directory: not unknown")
	}
	quiet(t, w, dirs)
	quiet(t, w, dirs)
	// A parent replaced by a link to another directory holding a b.
	a := filepath.Join(base, "a")
	must(t, os.Rename(a, filepath.Join(base, "a-old")))
	must(t, os.Symlink(filepath.Join(base, "other"), a))
	if _, unknown := changes(w, dirs...); !unknown[b] {
		t.Fatal("b's parent replaced by a link to another directory: b not unknown")
	}
	// Through a link, a path is stated at every call.
	for range 3 {
		before := w.stated
		changes(w, dirs...)
		if w.stated == before {
			t.Fatal("a path through a link was not stated")
		}
	}
}

// TestChangesHeldMounts: a mount over a parent (no inotify event) makes
// the directories below it stated again, and so unknown: run in a mount
// namespace of its own (unshare), as root.
func TestChangesHeldMounts(t *testing.T) {
	if dir := os.Getenv("DIRNOTIFY_MOUNT_TEST"); dir != "" {
		mountedParent(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mounts need root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	cmd := exec.Command(unshare, "-m", "--propagation", "private", os.Args[0], "-test.run", "^TestChangesHeldMounts$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "DIRNOTIFY_MOUNT_TEST="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestChangesHeldMounts")) {
		t.Fatalf("the test in its namespace did not pass:\n%s", out)
	}
}

func mountedParent(t *testing.T, base string) {
	b := filepath.Join(base, "a", "b")
	must(t, os.MkdirAll(b, 0o700))
	dirs := chain(b)
	w := newWatcher(t)
	changes(w, dirs...)
	quiet(t, w, dirs)
	if n := quiet(t, w, dirs); n != 0 {
		t.Fatalf("nothing changed: %d stated", n)
	}
	a := filepath.Join(base, "a")
	if err := unix.Mount("tmpfs", a, "tmpfs", 0, ""); err != nil {
		t.Skipf("mount: %v", err)
	}
	defer unix.Unmount(a, unix.MNT_DETACH)
	must(t, os.Mkdir(b, 0o700)) // another b, in the tmpfs
	if _, unknown := changes(w, dirs...); !unknown[b] {
		t.Fatal("a tmpfs mounted over b's parent: b not unknown")
	}
}
