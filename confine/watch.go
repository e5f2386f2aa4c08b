package confine

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Staleness. A Ruleset holds rules computed from the host's file system:
// which entries a directory holds (a listed directory grants each of its
// entries but the denied ones), where symbolic links lead (a denied path
// is denied where it really is) and what a glob matches. The launcher
// reopens every rule by its path when it confines a command, so a change
// the rules have not seen can only deny too much — a new entry beside a
// protected one has no rule yet — with one exception: a link on the way to
// a denied path that now leads elsewhere, or a new match of a denied glob,
// moves a secret to where the rules grant access. Those are what the
// stamps must catch, and they catch the first kind too, so that a new file
// beside a protected one becomes readable at the next command.
//
// A directory's stamp is its modification time and a digest of its
// entries (name, type and, for a link, its target): the entries are read
// again only when the time moved, and the rules are computed again only
// when the entries differ — a file created and removed again between two
// commands (an editor's or git's lock file in the home directory) costs
// one read of the directory, not a compilation. Modification times are
// as coarse as the kernel's tick: a change in the same tick as the
// stamp's reading would leave the time as it was, so a stamp taken less
// than settle after the directory last changed is Hot, and its entries
// are compared at every check until a check finds them settled.

// settle is how long after its last change a directory's stamp may be
// trusted by its time alone.
const settle = 2 * time.Second

// Stamp is a watched directory as the rules saw it.
type Stamp struct {
	Path string
	// MTime is the directory's modification time in Unix nanoseconds;
	// -1: it did not exist.
	MTime int64
	// Names is the digest of its entries (entriesDigest), "" when they
	// could not be read.
	Names string
	// Hot: the directory had changed less than settle before the stamp;
	// its entries are compared at every check.
	Hot bool
}

// watcher records, while rules are computed, the directories whose
// entries they depend on, each read once: the stamp is taken from the
// same reading as the rules, so a change after it moves the time.
type watcher struct {
	stamps map[string]Stamp
	ents   map[string][]dirEntry
	// other: directories read for anything but cover's listing (links,
	// globs, secrets, Public names); covers: cover's listings (patch.go).
	other  map[string]bool
	covers map[string][]coverRec
	passed map[string]map[string]bool
}

// pass is dir for resolveWatched, which looks up d's entry name alone.
func (w *watcher) pass(d, name string) {
	if w.passed == nil {
		w.passed = map[string]map[string]bool{}
	}
	if w.passed[d] == nil {
		w.passed[d] = map[string]bool{}
	}
	w.passed[d][name] = true
	w.read(d)
}

// dir records d and returns its entries (nil when it cannot be read).
func (w *watcher) dir(d string) []dirEntry {
	if w.other == nil {
		w.other = map[string]bool{}
	}
	w.other[d] = true
	return w.read(d)
}

// listing is dir for cover, which grants each entry of d but the denied
// ones (rights): recorded so that a new entry can be granted alone
// (patch.go).
func (w *watcher) listing(d string, deny []string, rights uint64) []dirEntry {
	if w.covers == nil {
		w.covers = map[string][]coverRec{}
	}
	w.covers[d] = append(w.covers[d], coverRec{deny: deny, rights: rights})
	return w.read(d)
}

func (w *watcher) read(d string) []dirEntry {
	if w.stamps == nil {
		w.stamps, w.ents = map[string]Stamp{}, map[string][]dirEntry{}
	}
	if _, ok := w.stamps[d]; ok {
		return w.ents[d]
	}
	st, ents := readStamp(d)
	w.stamps[d], w.ents[d] = st, ents
	return ents
}

// list is the stamps, sorted by path.
func (w *watcher) list() []Stamp {
	// Sorted as strings, not with a SortFunc on Stamp: each sort
	// instantiated is ~9 KB more of the launcher.
	paths := make([]string, 0, len(w.stamps))
	for p := range w.stamps {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	out := make([]Stamp, len(paths))
	for i, p := range paths {
		out[i] = w.stamps[p]
	}
	return out
}

// readStamp reads d's time, then its entries, then its time again: when
// the two times differ the directory changed while it was read, and the
// stamp is Hot.
func readStamp(d string) (Stamp, []dirEntry) {
	stampReads.Add(1)
	m1 := mtime(d)
	if m1 == -1 {
		return Stamp{Path: d, MTime: -1}, nil
	}
	ents, err := readDir(d)
	if err != nil {
		// Unreadable: its time alone is watched (no rule lists it).
		return Stamp{Path: d, MTime: m1, Hot: hot(m1)}, nil
	}
	m2 := mtime(d)
	return Stamp{Path: d, MTime: m2, Names: entriesDigest(d, ents), Hot: m1 != m2 || hot(m2)}, ents
}

// stampReads counts the directories readStamp read (tests: what a check
// costs).
var stampReads atomic.Int64

func hot(mt int64) bool { return time.Since(time.Unix(0, mt)) < settle }

// digestBytes is the length of an entries digest (before hex).
const digestBytes = 16

// entriesDigest is a digest of d's entries: names, types, link targets
// (SHA-256, cut to digestBytes, in hex).
func entriesDigest(d string, ents []dirEntry) string {
	h := newSHA256()
	for _, e := range ents {
		h.Write([]byte(e.Name()))
		h.Write([]byte{0, byte(e.Type() >> 24)})
		if e.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path.Join(d, e.Name()))
			h.Write([]byte(target))
		}
		h.Write([]byte{'\n'})
	}
	sum := h.Sum()
	return hexString(sum[:digestBytes])
}

// check compares s with the directory now: changed when its entries
// differ; when they do not, now is the stamp to keep (its time moved, or
// it settled), or s itself.
func (s Stamp) check() (changed bool, now Stamp) {
	m := mtime(s.Path)
	if m == s.MTime && !s.Hot {
		return false, s
	}
	if m == -1 || s.MTime == -1 {
		return m != s.MTime, s
	}
	cur, _ := readStamp(s.Path)
	if cur.Names != s.Names {
		return true, s
	}
	return false, cur
}

// Stale reports whether a watched directory's entries changed since the
// rules were computed: they must be computed again (Fresh).
func (rs Ruleset) Stale() bool {
	stale, _ := rs.check()
	return stale
}

// check is Stale, and, when not stale, whether stamps were renewed (a
// time that moved with the same entries, a Hot stamp settled): rs then
// holds the renewed stamps, which save the next check a reading.
func (rs *Ruleset) check() (stale, renewed bool) {
	var out []Stamp
	for i, s := range rs.Stamps {
		changed, now := s.check()
		if changed {
			return true, false
		}
		if now != s {
			if out == nil {
				out = append([]Stamp(nil), rs.Stamps...)
			}
			out[i] = now
		}
	}
	if out != nil {
		rs.Stamps = out
		return false, true
	}
	return false, false
}

// Fresh is rs, compiled again when it is stale; renewed reports that rs
// was not stale but its stamps were renewed (worth writing back).
func (rs Ruleset) Fresh() (fresh Ruleset, changed bool) {
	stale, renewed := rs.check()
	if stale {
		return Compile(rs.Spec), true
	}
	return rs, renewed
}

// resolveWatched is resolve, recording every directory a lookup on the
// way happens in: a link there that changes, or a new one, moves where p
// really is.
func resolveWatched(w *watcher, p string) string {
	const maxLinks = 40
	cur := "/"
	rest := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for links := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		w.pass(cur, name)
		next := path.Join(cur, name)
		t, err := lstatType(next)
		if err != nil {
			// What does not exist stays as written (a later creation
			// changes cur, watched).
			return path.Join(append([]string{next}, rest...)...)
		}
		if t&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return path.Join(append([]string{next}, rest...)...)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return path.Join(append([]string{next}, rest...)...)
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur
}

// globWatched expands p's metacharacters as filepath.Glob does (a literal
// path is kept whether or not it exists), recording the directories
// searched: a new match there changes what the rules deny.
func globWatched(w *watcher, p string) []string {
	if !strings.ContainsAny(p, "*?[") {
		return []string{p}
	}
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	dirs := []string{"/"}
	searched := false // past the first metacharacter: every directory is searched
	for i, part := range parts {
		last := i == len(parts)-1
		var next []string
		for _, d := range dirs {
			if !strings.ContainsAny(part, "*?[") {
				if searched {
					w.dir(d) // the name may appear there later
				}
				q := path.Join(d, part)
				if t, err := lstatType(q); err == nil && (last || t.IsDir() || t&fs.ModeSymlink != 0) {
					next = append(next, q)
				}
				continue
			}
			for _, e := range w.dir(d) {
				if ok, err := path.Match(part, e.Name()); err == nil && ok {
					next = append(next, path.Join(d, e.Name()))
				}
			}
		}
		searched = searched || strings.ContainsAny(part, "*?[")
		dirs = next
	}
	return dirs
}
