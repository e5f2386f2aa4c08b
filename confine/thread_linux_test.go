package confine

import (
	"slices"
	"testing"
)

// TestWatchedDirsFollowTheStamps: the directories the notifier is asked
// about are those the stamps of the rulesets patched here name now (the
// listed ones among them) — a directory a compilation added is watched
// from the next check on (one left out would have its changes taken for
// none), and a ruleset not patched here (no listings) is not asked about.
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
	check("/a", "/b", "/c", "/s")
	check("/a", "/b", "/c", "/s")                   // kept
	r.rss[1], r.lists[1] = rs("/d", "/t"), ls("/d") // compiled again
	check("/a", "/b", "/c", "/d", "/s", "/t")
	r.rss[0], r.lists[0] = rs("/e"), ls("/e")
	check("/b", "/c", "/d", "/e", "/t")
	r.rss, r.lists = r.rss[:1], r.lists[:1]
	check("/e")
}
