package confine

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWatchedDirsFollowTheStamps: the directories the notifier is asked
// about are those the stamps of the rulesets name now (the listed ones
// among them) — a directory a compilation added is watched from the next
// check on (one left out would have its changes taken for none), also
// of a ruleset not compiled here (no listings: read from a file).
func TestWatchedDirsFollowTheStamps(t *testing.T) {
	ls := func(dirs ...string) *listings {
		l := &listings{dirs: map[string]listed{}}
		for _, d := range dirs {
			l.dirs[d] = listed{}
		}
		return l
	}
	rs := func(dirs ...string) Ruleset {
		var r Ruleset
		for _, d := range dirs {
			r.Stamps = append(r.Stamps, Stamp{Path: d})
		}
		return r
	}
	r := &Restrictor{rss: []Ruleset{rs("/a", "/b", "/s"), rs("/x"), rs("/b", "/c")},
		lists: []*listings{ls("/a", "/b"), nil, ls("/b", "/c")}}
	check := func(want ...string) {
		t.Helper()
		dirs, asked := r.watchedDirs()
		got := slices.Clone(dirs)
		slices.Sort(got)
		if !slices.Equal(got, want) || len(asked) != len(want) {
			t.Errorf("watched directories %q (%d asked), want %q", got, len(asked), want)
		}
		for _, d := range want {
			if !asked[d] {
				t.Errorf("%s not in the set", d)
			}
		}
	}
	check("/a", "/b", "/c", "/s", "/x")
	check("/a", "/b", "/c", "/s", "/x")             // kept
	r.rss[1], r.lists[1] = rs("/d", "/t"), ls("/d") // compiled again
	check("/a", "/b", "/c", "/d", "/s", "/t")
	r.rss[0], r.lists[0] = rs("/e"), ls("/e")
	check("/b", "/c", "/d", "/e", "/t")
	r.rss, r.lists = r.rss[:1], r.lists[:1]
	check("/e")
}

// TestRestrictorFromFileNotified: a Restrictor whose rules were read from
// a file (the served worker's: no listings until it compiles them) is
// told by the notifier too — a check after the first, which watches,
// reads no directory while nothing changed, Hot stamps included (the
// launcher's directory just written, read at every command for two
// seconds before), and still finds a change in a directory read for
// Public names.
func TestRestrictorFromFileNotified(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly) // just made: its stamps Hot
	if err := os.WriteFile(filepath.Join(h, ".ssh", "id_rsa.pub"), []byte("pub"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := Compile(s)
	rs.listed = nil // as ReadRuleset gives it
	hot := 0
	for _, st := range rs.Stamps {
		if st.Hot {
			hot++
		}
	}
	if hot == 0 {
		t.Fatalf("no Hot stamp: %+v", rs.Stamps)
	}
	// /tmp, above the home, may change between two checks on a busy
	// machine (it compiles, and the next check patches): a few tries.
	var r *Restrictor
	quiet := false
	for range 5 {
		var err error
		if r, err = NewRestrictor(rs); err != nil {
			t.Fatal(err)
		}
		if r.notify == nil {
			r.Close()
			t.Skip("no inotify")
		}
		r.Current(0) // watches: the Hot stamps are read
		before := stampReads.Load()
		ok, _ := r.Current(0)
		reads := stampReads.Load() - before
		t.Logf("second check: %d directories read, current %v, %d compiled", reads, ok, r.compiles)
		if reads == 0 && ok && r.compiles == 0 {
			quiet = true
			break
		}
		r.Close()
	}
	if !quiet {
		t.Fatalf("with %d Hot stamps, a check told nothing changed read directories in 5 tries", hot)
	}
	defer r.Close()
	// A Public name appears in ~/.ssh, which the rules read for them.
	if err := os.WriteFile(filepath.Join(h, ".ssh", "new.pub"), []byte("pub"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Current(0); ok || r.compiles == 0 {
		t.Errorf("a new Public name in ~/.ssh: current %v, %d compiled", ok, r.compiles)
	}
	gen, rss := r.Rules()
	if gen == 0 || !rss[0].Allows(filepath.Join(h, ".ssh", "new.pub"), false) {
		t.Errorf("the new Public name is not granted (generation %d)", gen)
	}
}

// TestRestrictorWatchesBusyDirs: of the directories the rules watch, the
// notifier watches only the busy ones — a Hot stamp's, or one whose time
// moved since an earlier check — not the hundreds a host's rules name
// that do not change (a watch costs four system calls, a check's stat
// one); and a change in a directory not watched is still found, by its
// time, and granted at the next command; the home is watched from then on.
func TestRestrictorWatchesBusyDirs(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	// Settled, as a kept host's home: its directories' times an hour ago.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(h, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	os.Chtimes(filepath.Dir(h), old, old)
	rs := Compile(s)
	rs.listed = nil // as ReadRuleset gives it
	if len(rs.Stamps) < 5 {
		t.Fatalf("only %d stamps", len(rs.Stamps))
	}
	hot := 0 // /tmp, where the test's directory was just made
	for _, st := range rs.Stamps {
		if st.Hot {
			hot++
		}
	}
	// /tmp, above the home, may change between two checks on a busy
	// machine (and be watched from then on): a few tries.
	for try := 0; ; try++ {
		r, err := NewRestrictor(rs)
		if err != nil {
			t.Fatal(err)
		}
		if r.notify == nil {
			r.Close()
			t.Skip("no inotify")
		}
		r.Current(0)
		r.Current(0)
		n := r.notify.Len()
		r.Close()
		t.Logf("%d stamps (%d Hot), %d watched after two checks", len(rs.Stamps), hot, n)
		if n <= hot {
			break
		}
		if try == 4 {
			t.Fatalf("%d of %d directories watched after two checks with no change, %d of them Hot", n, len(rs.Stamps), hot)
		}
	}
	r, err := NewRestrictor(rs)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Current(0)
	p := filepath.Join(h, "new")
	if err := os.WriteFile(p, []byte("new content"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := r.Do(func() { out, _ = exec.Command("cat", p).CombinedOutput() }); err != nil {
		t.Fatal(err)
	}
	if string(out) != "new content" {
		t.Fatalf("a new file in a directory not watched: %q", out)
	}
	r.Current(0) // its time moved: watched from here
	n := r.notify.Len()
	r.mu.Lock()
	busy := r.busy[h]
	r.mu.Unlock()
	if !busy || n > hot+1 {
		t.Errorf("after a change in the home: %d of %d directories watched (the home: %v), want it and the Hot ones (%d)", n, len(rs.Stamps), busy, hot)
	}
}
