package confine

import (
	"slices"
	"testing"
)

// TestListedDirsFollowsTheListings: the directories the notifier is
// asked about are those the listings hold now — a directory a compilation
// or patch added is watched from the next check on (one left out would
// have its changes taken for none).
func TestListedDirsFollowsTheListings(t *testing.T) {
	ls := func(dirs ...string) *listings {
		l := &listings{dirs: map[string]listed{}}
		for _, d := range dirs {
			l.dirs[d] = listed{}
		}
		return l
	}
	r := &Restrictor{lists: []*listings{ls("/a", "/b"), nil, ls("/b", "/c")}}
	check := func(want ...string) {
		t.Helper()
		got := slices.Clone(r.listedDirs())
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("listed directories %q, want %q", got, want)
		}
	}
	check("/a", "/b", "/c")
	check("/a", "/b", "/c") // kept
	r.lists[1] = ls("/d")   // compiled again
	check("/a", "/b", "/c", "/d")
	r.lists[0] = ls("/e") // patched: a new listings
	check("/b", "/c", "/d", "/e")
	r.lists = r.lists[:1]
	check("/e")
}
