package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStaleOnlyWhenTheRulesCanChange: a file in a directory the rules do
// not list, or a file made and removed again in a listed one, compiles
// nothing again; a new entry in a listed directory, a new match of a
// denied glob, a new file in a protected directory (Public names) and a
// link on the way to a denied path that now leads elsewhere each do — the
// last one because the stale rules would grant the secret where it now is.
func TestStaleOnlyWhenTheRulesCanChange(t *testing.T) {
	h, s := home(t, ReadOnly)
	other := t.TempDir() // beside the home: granted whole, not watched
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	settled := func(s Spec) Ruleset {
		t.Helper()
		rs := Compile(s)
		// Make every stamp as it would be once settled (no Hot stamp: the
		// test's directories were all made a moment ago).
		for i := range rs.Stamps {
			rs.Stamps[i].Hot = false
		}
		return rs
	}
	rs := settled(s)
	for _, st := range rs.Stamps {
		if st.Path == other || st.Path == filepath.Dir(other) && filepath.Dir(other) != filepath.Dir(h) {
			t.Errorf("%s is watched", st.Path)
		}
	}
	// What must not make the rules stale, tried up to ten times: the
	// home's ancestors (/tmp) are listed too, and another process may
	// change them meanwhile, which rightly does.
	var fresh Ruleset
	for try := 1; ; try++ {
		var errs []string
		mk(filepath.Join(other, "new"))
		if rs.Stale() {
			errs = append(errs, "stale after a file was made where nothing is denied")
		}
		// A lock file made and removed in the home: its time moved, its
		// entries did not.
		time.Sleep(20 * time.Millisecond)
		mk(filepath.Join(h, ".lock"))
		os.Remove(filepath.Join(h, ".lock"))
		var changed bool
		fresh, changed = rs.Fresh()
		if !changed || fresh.Stale() || !slices.Equal(fresh.Rules, rs.Rules) {
			errs = append(errs, fmt.Sprintf("a transient file: renewed %v, stale after %v, rules the same %v", changed, fresh.Stale(), slices.Equal(fresh.Rules, rs.Rules)))
		}
		if again, changed := fresh.Fresh(); changed || !equalStamps(again.Stamps, fresh.Stamps) {
			errs = append(errs, "renewed stamps renewed again with nothing changed")
		}
		if len(errs) == 0 {
			break
		}
		if try == 10 {
			t.Fatal(strings.Join(errs, "; "))
		}
		t.Logf("try %d: %s", try, strings.Join(errs, "; "))
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		rs = settled(s)
	}
	rs = fresh

	for _, tc := range []struct{ name, make string }{
		{"a new file in the home (listed)", filepath.Join(h, "later")},
		{"a new file in a protected directory", filepath.Join(h, ".ssh", "id_new.pub")},
	} {
		mk(tc.make)
		if !rs.Stale() {
			t.Errorf("%s: not stale", tc.name)
		}
		rs = settled(s)
	}

	// A denied glob with no match yet.
	g := s
	g.NoRead = append(g.NoRead, filepath.Join(h, "keys", "*_key"))
	os.Mkdir(filepath.Join(h, "keys"), 0o700)
	rs = settled(g)
	mk(filepath.Join(h, "keys", "host_key"))
	if !rs.Stale() {
		t.Error("a new match of a denied glob: not stale")
	}
	if Compile(g).Allows(filepath.Join(h, "keys", "host_key"), false) {
		t.Error("the new match is readable after compiling again")
	}

	// A link on the way to a denied path, pointed elsewhere: the link
	// lies in a directory the rules grant whole (no denied path really
	// lies there), so only watching where links are looked up catches it.
	l := s
	mk(filepath.Join(h, "a", "secret"))
	mk(filepath.Join(other, "b", "secret"))
	link := filepath.Join(other, "link")
	if err := os.Symlink(filepath.Join(h, "a"), link); err != nil {
		t.Fatal(err)
	}
	l.NoRead = append(l.NoRead, filepath.Join(link, "secret"))
	rs = settled(l)
	if rs.Allows(filepath.Join(h, "a", "secret"), false) {
		t.Fatal("the secret behind the link is readable")
	}
	os.Remove(link)
	if err := os.Symlink(filepath.Join(other, "b"), link); err != nil {
		t.Fatal(err)
	}
	if !rs.Allows(filepath.Join(other, "b", "secret"), false) {
		t.Fatal("the test proves nothing: the stale rules deny the new target")
	}
	if !rs.Stale() {
		t.Error("a link on the way to a denied path now leads elsewhere: not stale")
	}
	if Compile(l).Allows(filepath.Join(other, "b", "secret"), false) {
		t.Error("the link's new target is readable after compiling again")
	}
}

// TestHotStampComparesEntries: a stamp taken right after its directory
// changed is Hot (a change in the same tick would leave the time as it
// was); its entries are compared, so a change is caught whatever the time.
func TestHotStampComparesEntries(t *testing.T) {
	h, s := home(t, ReadOnly)
	rs := Compile(s)
	var st *Stamp
	for i := range rs.Stamps {
		if rs.Stamps[i].Path == h {
			st = &rs.Stamps[i]
		}
	}
	if st == nil || !st.Hot {
		t.Fatalf("the home just made has no Hot stamp: %+v", rs.Stamps)
	}
	mt := st.MTime
	if err := os.WriteFile(filepath.Join(h, "later"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// As if the change fell in the stamp's tick.
	now := time.Unix(0, mt)
	if err := os.Chtimes(h, now, now); err != nil {
		t.Fatal(err)
	}
	if !rs.Stale() {
		t.Error("a Hot stamp missed a change that left the time as it was")
	}
}

func equalStamps(a, b []Stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
