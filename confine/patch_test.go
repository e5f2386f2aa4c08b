package confine

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine/dirnotify"
)

// rulesUnder is rs's rules on h and below, by path.
func rulesUnder(rs Ruleset, h string) map[string]Rule {
	m := map[string]Rule{}
	for _, r := range rs.Rules {
		if r.Path == h || strings.HasPrefix(r.Path, h+"/") {
			m[r.Path] = r
		}
	}
	return m
}

// TestPatchIsCompile: entries made, removed and changed in a listed
// directory (the home: it holds denied paths) patch the rules into those
// a compilation gives; a change patching cannot follow (a name the Spec
// denies, an entry a path is resolved through, a new entry in a directory
// searched for Public names) compiles again.
func TestPatchIsCompile(t *testing.T) {
	t.Run("stamps", func(t *testing.T) { testPatchIsCompile(t, false) })
	// Told by inotify which entries changed (dirnotify), the patch reads
	// no directory and must come to the same rules.
	t.Run("notified", func(t *testing.T) { testPatchIsCompile(t, true) })
}

// notifiedOf asks n about rs's watched directories, as
// Restrictor.notified does.
func notifiedOf(n *dirnotify.Watcher, rs Ruleset) func(string) ([]dirnotify.Entry, bool) {
	asked := map[string]bool{}
	var dirs []string
	for _, st := range rs.Stamps {
		asked[st.Path] = true
		dirs = append(dirs, st.Path)
	}
	names, unknown := n.Changes(dirs)
	return func(d string) ([]dirnotify.Entry, bool) { return names[d], asked[d] && !unknown[d] }
}

func testPatchIsCompile(t *testing.T, notified bool) {
	h, s := home(t, NoProtected)
	rs, l := compileListed(s)
	if _, ok := l.dirs[h]; !ok {
		t.Fatalf("the home is not patchable: %v", l.dirs)
	}
	var n *dirnotify.Watcher
	if notified {
		w, err := dirnotify.New()
		if err != nil {
			t.Skip(err)
		}
		defer w.Close()
		n = w
		notifiedOf(n, rs) // watched from now on
	}
	steps := []struct {
		name  string
		do    func() error
		patch bool // patched, not compiled again
	}{
		{"a new file", func() error { return os.WriteFile(filepath.Join(h, "new"), []byte("x"), 0o600) }, true},
		{"a new directory", func() error { return os.Mkdir(filepath.Join(h, "newdir"), 0o700) }, true},
		{"a new link", func() error { return os.Symlink("/etc", filepath.Join(h, "newlink")) }, true},
		{"a file removed", func() error { return os.Remove(filepath.Join(h, "new")) }, true},
		{"a directory become a file", func() error {
			if err := os.Remove(filepath.Join(h, "newdir")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(h, "newdir"), nil, 0o600)
		}, true},
		{"a name the Spec denies", func() error { return os.WriteFile(filepath.Join(h, ".bash_profile"), nil, 0o600) }, false},
		{"the denied directory's parent replaced", func() error {
			if err := os.Rename(filepath.Join(h, ".config"), filepath.Join(h, ".config-old")); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(h, "work"), filepath.Join(h, ".config"))
		}, false},
		{"a new file in a directory searched for Public names", func() error {
			return os.WriteFile(filepath.Join(h, ".ssh", "id_new.pub"), nil, 0o600)
		}, false},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var known func(string) ([]dirnotify.Entry, bool)
		if n != nil {
			// The change in what the stamps take for the same tick:
			// each directory's time as it is now, settled. The
			// notifier alone tells what changed, in a listed directory
			// or in one read for anything else (Public names).
			for i := range rs.Stamps {
				rs.Stamps[i].MTime, rs.Stamps[i].Hot = mtime(rs.Stamps[i].Path), false
			}
			known = notifiedOf(n, rs)
			if _, ok := known(h); !ok {
				t.Fatalf("%s: the home is not known to the notifier", st.name)
			}
		} else {
			for i := range rs.Stamps {
				rs.Stamps[i].Hot = true // compare entries now, whatever the clock
			}
		}
		prs, pl, _, changed, ok := patch(rs, l, known)
		if ok != st.patch {
			t.Fatalf("%s: patched %v, want %v", st.name, ok, st.patch)
		}
		want, wl := compileListed(s)
		if ok {
			if got := rulesUnder(prs, h); !mapsEqual(got, rulesUnder(want, h)) {
				t.Fatalf("%s: patched rules differ from compiled ones:\n%v\n%v", st.name, got, rulesUnder(want, h))
			}
			if !changed && st.name != "a new link" {
				t.Errorf("%s: rules not changed", st.name)
			}
			if staleUnder(prs, h) {
				t.Errorf("%s: stale after the patch", st.name)
			}
			if n != nil {
				if got, want := pl.dirs[h].ents, entryKeys(h, mustReadDir(t, h)); !maps.Equal(got, want) {
					t.Errorf("%s: the listing patched from the notifier differs from the directory:\n%v\n%v", st.name, got, want)
				}
			}
			rs, l = prs, pl
			continue
		}
		rs, l = want, wl
	}
	if rs.Allows(filepath.Join(h, ".ssh", "id_rsa"), false) || !rs.Allows(filepath.Join(h, "newdir"), true) {
		t.Error("the rules at the end: a secret readable or a new file not writable")
	}
}

// staleUnder is Stale for the stamps of h and below: /tmp, above the
// home, changes with whatever else runs on the machine.
func staleUnder(rs Ruleset, h string) bool {
	for _, st := range rs.Stamps {
		if st.Path == h || strings.HasPrefix(st.Path, h+"/") {
			if changed, _ := st.check(); changed {
				return true
			}
		}
	}
	return false
}

func mapsEqual(a, b map[string]Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRestrictorPatches: files made one by one in a listed directory are
// readable by the next confined command without compiling the rules
// again (the Restrictor starts from what Compile listed: even the first
// is patched); the secret beside them stays unreadable.
func TestRestrictorPatches(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r := restrictor(t, s)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(h, name)
		if err := os.WriteFile(p, []byte("content "+name), 0o600); err != nil {
			t.Fatal(err)
		}
		var out []byte
		if err := r.Do(func() {
			out, _ = exec.Command("/bin/sh", "-c", "cat "+p+"; cat "+h+"/.ssh/id_rsa").CombinedOutput()
		}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(out), "content "+name) || strings.Contains(string(out), "SECRET") {
			t.Fatalf("%s: %q", name, out)
		}
	}
	r.mu.Lock()
	compiles, patches := r.compiles, r.patches
	r.mu.Unlock()
	if compiles > 0 || patches < 5 {
		t.Errorf("compiled %d times, patched %d: want every file patched", compiles, patches)
	}
}

func mustReadDir(t *testing.T, d string) []dirEntry {
	t.Helper()
	ents, err := readDir(d)
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// TestRestrictorNotified: with a notifier, a new file beside the secret
// is readable at the next command even when the directory's time says
// nothing changed (a change in the same clock tick as the stamp, which
// the stamps alone trust once settled); the secret stays unreadable when
// the denied directory's parent is swapped for a link to it, and a
// notifier that lost track (closed) falls back to the stamps.
func TestRestrictorNotified(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r := restrictor(t, s)
	if r.notify == nil {
		t.Skip("no inotify")
	}
	run := func(cmd string) string {
		t.Helper()
		var out []byte
		if err := r.Do(func() { out, _ = exec.Command("/bin/sh", "-c", cmd).CombinedOutput() }); err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	// The first check watches the listed directories; the second file
	// is told by the notifier.
	for _, name := range []string{"a", "b"} {
		p := filepath.Join(h, name)
		if err := os.WriteFile(p, []byte("content "+name), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := run("cat " + p); out != "content "+name {
			t.Fatalf("%s: %q", name, out)
		}
	}
	// Made in what the stamp takes for the same tick: its time and
	// entries as they are after the file, settled.
	r.mu.Lock()
	stamp := func(p string) {
		for j := range r.rss {
			for i, st := range r.rss[j].Stamps {
				if st.Path == p {
					r.rss[j].Stamps[i].MTime, r.rss[j].Stamps[i].Hot = mtime(p), false
				}
			}
		}
	}
	r.mu.Unlock()
	p := filepath.Join(h, "c")
	if err := os.WriteFile(p, []byte("content c"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	stamp(h)
	r.mu.Unlock()
	if out := run("cat " + p); out != "content c" {
		t.Fatalf("a file the stamps cannot see, with a notifier: %q", out)
	}
	if err := os.Rename(filepath.Join(h, ".config"), filepath.Join(h, ".config-old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(h, ".config-old"), filepath.Join(h, ".config")); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	stamp(h)
	r.mu.Unlock()
	if out := run("cat " + h + "/.config-old/agent/config.yaml " + h + "/.ssh/id_rsa"); strings.Contains(out, "policy") || strings.Contains(out, "SECRET") {
		t.Fatalf("the denied directory moved under a link: %q", out)
	}
	r.notify.Close()
	p = filepath.Join(h, "d")
	if err := os.WriteFile(p, []byte("content d"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run("cat " + p); out != "content d" {
		t.Fatalf("the notifier closed, the stamps: %q", out)
	}
}

// TestRestrictorPatchesInPlace: with a notifier, a new file's grant is
// added to the Landlock ruleset in place, and a removed file's rule may
// stay there (no path reaches it); but a granted file renamed into a
// denied directory — even with another file made at its name at once,
// which leaves the directory's entries as they were — is unreadable at
// the next command: the ruleset is built again without its rule.
func TestRestrictorPatchesInPlace(t *testing.T) {
	t.Run("thread a command", func(t *testing.T) { testRestrictorPatchesInPlace(t, false, false) })
	// The next command's thread confined while one runs (KeepSpare): one
	// confined to rules since changed is not used.
	t.Run("spare thread", func(t *testing.T) { testRestrictorPatchesInPlace(t, true, false) })
	// The thread of the command before (Reuse, as agent locally): not
	// once the rules moved; every directory watched (WatchAll).
	t.Run("reused thread", func(t *testing.T) { testRestrictorPatchesInPlace(t, true, true) })
}

func testRestrictorPatchesInPlace(t *testing.T, spare, reuse bool) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	// Deep in the denied directory: no stamp watches it.
	deep := filepath.Join(h, ".config", "agent", "deep")
	if err := os.Mkdir(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	r := restrictor(t, s)
	if r.notify == nil {
		t.Skip("no inotify")
	}
	if spare {
		r.KeepSpare()
	}
	if reuse {
		r.Reuse()
		r.WatchAll() // as agent locally
	}
	for _, st := range r.rss[0].Stamps {
		if st.Path == deep {
			t.Fatal("the directory deep in the denied one is watched: the test would not show the rename")
		}
	}
	run := func(cmd string) string {
		t.Helper()
		if reuse {
			out, _ := reuseRun(t, r, cmd, nil)
			return out
		}
		var out []byte
		if err := r.Do(func() { out, _ = exec.Command("/bin/sh", "-c", cmd).CombinedOutput() }); err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	counts := func() (inPlace, rebuilt int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.inPlace, len(r.old)
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(h, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run("true") // watched from here on
	write("a", "content a")
	if out := run("cat " + h + "/a"); out != "content a" {
		t.Fatalf("a new file: %q", out)
	}
	if err := os.Remove(filepath.Join(h, "a")); err != nil {
		t.Fatal(err)
	}
	write("b", "content b")
	if out := run("cat " + h + "/b"); out != "content b" {
		t.Fatalf("another new file: %q", out)
	}
	// (Rebuilds may come from /tmp, above the home: another job's file
	// renamed away there.)
	if in, _ := counts(); in < 2 {
		t.Fatalf("patched in place %d times, want 2", in)
	}
	// A file removed alone: its rule may stay, the rules' generation
	// (a shell confined ahead of its command) holds. The home is under a
	// busy /tmp, whose new entries move it: ten times in a row is not
	// that.
	for try := 1; ; try++ {
		write("gone", "")
		run("true")
		gen, _ := r.Rules()
		if err := os.Remove(filepath.Join(h, "gone")); err != nil {
			t.Fatal(err)
		}
		ok, err := r.Current(gen)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if try == 10 {
			t.Fatalf("a file removed: the rules of generation %d no longer hold, ten times", gen)
		}
	}
	gen, _ := r.Rules()
	if err := os.Remove(filepath.Join(h, "b")); err != nil {
		t.Fatal(err)
	}
	write("b", "content b")
	if ok, _ := r.Current(gen); ok {
		t.Fatal("a file removed and made again: the rules of the generation before still hold")
	}
	if out := run("cat " + h + "/b"); out != "content b" {
		t.Fatalf("a file removed and made again: %q", out)
	}
	denied := filepath.Join(deep, "b")
	if err := os.Rename(filepath.Join(h, "b"), denied); err != nil {
		t.Fatal(err)
	}
	write("b", "content b again")
	if out := run("cat " + denied + "; cat " + h + "/b"); strings.Contains(out, "content b\n") || strings.HasPrefix(out, "content b") || !strings.HasSuffix(out, "content b again") {
		t.Fatalf("a granted file renamed into a denied directory, another made at its name: %q", out)
	}
	if _, re := counts(); re < 1 {
		t.Fatal("not built again")
	}
	if spare {
		// Nothing changes from here: a spare (or the thread before) runs
		// the next commands (the home is under a busy /tmp: one that
		// changed retires it).
		for i := 0; i < 20; i++ {
			run("true")
		}
		r.mu.Lock()
		spared, reused := r.spared, r.reused
		r.mu.Unlock()
		if !reuse && spared == 0 {
			t.Error("no command started on a spare thread")
		}
		if reuse && reused == 0 {
			t.Error("no command started on the thread of the one before")
		}
	}
}

// TestRestrictorOneSpare: commands run side by side leave one spare
// thread, not one each (the others would wait for a function forever).
func TestRestrictorOneSpare(t *testing.T) {
	needLandlock(t)
	_, s := home(t, ReadOnly)
	r := restrictor(t, s)
	r.KeepSpare()
	threads := func() int {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- r.Do(func() { exec.Command("/bin/sh", "-c", "sleep 0.2").Run() }) }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	spare := r.spare != nil
	r.mu.Unlock()
	if !spare {
		t.Fatal("no spare thread kept")
	}
	before := threads()
	r.Close()
	// The spare ends with Close; none is left waiting.
	deadline := time.Now().Add(2 * time.Second)
	for threads() >= before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if threads() >= before {
		t.Errorf("%d threads before Close, %d after: the spare did not end", before, threads())
	}
}

// TestNotifiedStampsNotRead: with a notifier that saw no change, a check
// reads no watched directory, listed or not, even where its stamp is Hot
// (taken less than settle after the directory changed: agent's state
// directory at the start of every run), which the stamps alone read at
// every check.
func TestNotifiedStampsNotRead(t *testing.T) {
	_, s := home(t, ReadOnly) // just made: every stamp Hot
	rs, l := compileListed(s)
	hot := 0
	for _, st := range rs.Stamps {
		if _, listed := l.dirs[st.Path]; st.Hot && !listed {
			hot++
		}
	}
	if hot == 0 {
		t.Fatalf("no Hot stamp of a directory not listed: %+v", rs.Stamps)
	}
	reads := func(known func(string) ([]dirnotify.Entry, bool)) int64 {
		before := stampReads.Load()
		_, _, _, changed, ok := patch(rs, l, known)
		if !ok || changed {
			t.Fatalf("nothing changed, yet patched %v changed %v", ok, changed)
		}
		return stampReads.Load() - before
	}
	if n := reads(nil); n < int64(hot) {
		t.Fatalf("the stamps alone read %d directories, %d Hot", n, hot)
	}
	w, err := dirnotify.New()
	if err != nil {
		t.Skip(err)
	}
	defer w.Close()
	notifiedOf(w, rs) // watched from now on
	if n := reads(notifiedOf(w, rs)); n != 0 {
		t.Fatalf("told nothing changed, the check read %d directories", n)
	}
}
