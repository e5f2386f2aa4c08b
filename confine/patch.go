package confine

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/autoshell/agent/confine/dirnotify"
)

// Patching. A directory that holds a denied path is listed: each of its
// entries but the denied ones is granted (cover). A new entry there has
// no rule, and the stamps make the rules stale so that it is readable at
// the next command — on a busy machine /tmp, the parent of every scratch
// directory, gains and loses entries all the time, and compiling the
// whole Spec again each time (the secrets walk, every listed directory,
// every link) was a third of a local step's cost. When the only watched
// directories whose entries changed are listed for cover alone (nothing
// else of the rules read them: no glob, link, secret or Public name is
// looked for there, no path is resolved through an entry that changed),
// the rules are patched instead: a gone entry loses its rule, a new one is
// granted what cover grants it. Anything else — a new entry that is
// denied or holds a denied path, a name another list of the Spec names, a
// change in any other watched directory — compiles again, as before. The
// patched rules are those a compilation would give (TestPatchIsCompile).

// coverRec is one cover listing of a directory: each entry granted rights
// but the members of deny (sorted) and the directories that hold them.
type coverRec struct {
	deny   []string
	rights uint64
}

// listings is what a compilation listed for cover alone, and what it saw
// there: enough to patch the rules when only those directories changed.
type listings struct {
	dirs map[string]listed
}

type listed struct {
	// ents: each entry's name → its type and, for a link, its target.
	ents   map[string]entKey
	covers []coverRec
	// passed: the entries a path was resolved through (resolveWatched):
	// a change to one of them compiles again.
	passed map[string]bool
}

// compileListed is Compile, and the listings it can be patched by.
func compileListed(s Spec) (Ruleset, *listings) {
	var w watcher
	rules := s.compileWatched(&w)
	rs := Ruleset{Spec: s, Rules: make([]Rule, len(rules)), Stamps: w.list()}
	for i, r := range rules {
		rs.Rules[i] = Rule{Path: r.path, Rights: r.rights, Dir: r.dir}
	}
	l := &listings{dirs: map[string]listed{}}
	for d, covers := range w.covers {
		if w.other[d] || w.stamps[d].Names == "" {
			continue
		}
		l.dirs[d] = listed{ents: entryKeys(d, w.ents[d]), covers: covers, passed: w.passed[d]}
	}
	return rs, l
}

// entriesNamed is, of the names given, those entries dir had (from ents)
// and those it has now (an entry gone is left out).
func entriesNamed(dir string, ents map[string]entKey, names []dirnotify.Entry) (was, now map[string]entKey, err error) {
	was, now = map[string]entKey{}, map[string]entKey{}
	for _, e := range names {
		n := e.Name
		if k, ok := ents[n]; ok {
			was[n] = k
		}
		p := path.Join(dir, n)
		t, err := lstatType(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		k := entKey{typ: t}
		if t&fs.ModeSymlink != 0 {
			k.target, _ = os.Readlink(p)
		}
		now[n] = k
	}
	return was, now, nil
}

// sameEntries reports whether a and b hold the same entries (no
// maps.Equal: each generic instantiated is more of the launcher).
func sameEntries(a, b map[string]entKey) bool {
	if len(a) != len(b) {
		return false
	}
	for n, k := range a {
		if o, ok := b[n]; !ok || o != k {
			return false
		}
	}
	return true
}

// keysDigest is entriesDigest of the entries ents describes.
func keysDigest(ents map[string]entKey) string {
	names := make([]string, 0, len(ents))
	for n := range ents {
		names = append(names, n)
	}
	slices.Sort(names)
	h := newSHA256()
	for _, n := range names {
		k := ents[n]
		h.Write([]byte(n))
		h.Write([]byte{0, byte(k.typ >> 24)})
		if k.typ&fs.ModeSymlink != 0 {
			h.Write([]byte(k.target))
		}
		h.Write([]byte{'\n'})
	}
	sum := h.Sum()
	return hexString(sum[:digestBytes])
}

// entKey is what an entry is: its type, and a link's target.
type entKey struct {
	typ    fs.FileMode
	target string
}

// entryKeys is d's entries by name.
func entryKeys(d string, ents []dirEntry) map[string]entKey {
	m := make(map[string]entKey, len(ents))
	for _, e := range ents {
		k := entKey{typ: e.Type()}
		if k.typ&fs.ModeSymlink != 0 {
			k.target, _ = os.Readlink(path.Join(d, e.Name()))
		}
		m[e.Name()] = k
	}
	return m
}

// patch is rs brought up to date by patching (see above); ok false: it
// must be compiled again. changed: the rules changed (the stamps are
// renewed either way); l is not modified, nl is the listings of out.
//
// known, when not nil, is what a DirNotifier vouches for: the names that
// may have changed in a watched directory since the last check (ok false:
// it cannot say, the directory is checked by its stamp). In a listed
// directory only those entries are looked at again, the directory is not
// read; any other watched directory is read only when a name changed
// there — its time is not asked (a Hot stamp, one taken less than settle
// after the directory changed, would be read at every check: agent's own
// state directory, changed when a run starts, for the first two seconds
// of every run).
//
// dl says how the rules changed, for a Restrictor to change its Landlock
// ruleset in place rather than build it again.
func patch(rs Ruleset, l *listings, known func(dir string) (names []dirnotify.Entry, ok bool)) (out Ruleset, nl *listings, dl patchDelta, changed, ok bool) {
	out, nl = rs, l
	var set *ruleSet
	cloned := false
	for i, st := range rs.Stamps {
		var names []dirnotify.Entry
		told := false
		if known != nil {
			names, told = known(st.Path)
		}
		if told && len(names) == 0 {
			continue // its entries are as they were
		}
		if d, found := nl.dirs[st.Path]; found && told {
			was, now, err := entriesNamed(st.Path, d.ents, names)
			if err != nil {
				return rs, l, dl, false, false
			}
			away := map[string]bool{}
			for _, e := range names {
				if e.Away {
					away[e.Name] = true
					if rulesAt(rs.Rules, path.Join(st.Path, e.Name)) {
						// Renamed away, maybe put back: the rule
						// holds the file where it went.
						dl.rebuild, changed = true, true
					}
				}
			}
			if set == nil {
				set = ruleSetOf(rs.Rules)
			}
			if sameEntries(was, now) {
				// Removed and made again (an editor's save, a
				// rename over it): the new file has no rule yet.
				for n, k := range now {
					if !d.passed[n] && !d.grant(set, rs.Spec, path.Join(st.Path, n), k, &dl) {
						return rs, l, dl, false, false
					}
				}
				changed = changed || len(dl.added) > 0
				continue
			}
			part := d
			part.ents = was
			if !part.apply(set, rs.Spec, st.Path, now, &dl, away) {
				return rs, l, dl, false, false
			}
			ents := make(map[string]entKey, len(d.ents)+len(now))
			for n, k := range d.ents {
				if _, ok := was[n]; !ok {
					ents[n] = k
				}
			}
			for n, k := range now {
				ents[n] = k
			}
			if nl == l {
				nl = &listings{dirs: maps.Clone(l.dirs)}
			}
			d.ents = ents
			nl.dirs[st.Path] = d
			if !cloned {
				out.Stamps, cloned = slices.Clone(rs.Stamps), true
			}
			// Hot: should the notifier lose track, the stamp's time
			// alone is not trusted, the entries are read.
			out.Stamps[i] = Stamp{Path: st.Path, MTime: mtime(st.Path), Names: keysDigest(ents), Hot: true}
			continue
		}
		m := mtime(st.Path)
		if m == st.MTime && !st.Hot && !told {
			continue
		}
		if m == -1 || st.MTime == -1 {
			if m != st.MTime {
				return rs, l, dl, false, false
			}
			continue
		}
		cur, ents := readStamp(st.Path)
		if !cloned {
			out.Stamps, cloned = slices.Clone(rs.Stamps), true
		}
		if cur.Names == st.Names {
			out.Stamps[i] = cur
			continue
		}
		d, found := nl.dirs[st.Path]
		if !found || cur.Names == "" {
			return rs, l, dl, false, false
		}
		if set == nil {
			set = ruleSetOf(rs.Rules)
		}
		now := entryKeys(st.Path, ents)
		if !d.apply(set, rs.Spec, st.Path, now, &dl, nil) {
			return rs, l, dl, false, false
		}
		if nl == l {
			nl = &listings{dirs: maps.Clone(l.dirs)}
		}
		d.ents = now
		nl.dirs[st.Path] = d
		out.Stamps[i] = cur
	}
	if set == nil {
		return out, nl, dl, changed, true
	}
	rules := set.list()
	out.Rules = make([]Rule, len(rules))
	for i, r := range rules {
		out.Rules[i] = Rule{Path: r.path, Rights: r.rights, Dir: r.dir}
	}
	return out, nl, dl, true, true
}

// checkTold is check told by the notifier what it vouches for (known, as
// patch takes it): a directory where it saw no name change is not looked
// at, one where it saw one is read whatever its time says, the others are
// checked by their stamps. It is the check of rules read from a file (the
// served worker's: no listings until compiled here), whose Hot stamps —
// the launcher's directory, written when the session was set up, ~1,400
// entries on a host where tests keep their rules — were read at every
// command for the first two seconds of every session.
func (rs *Ruleset) checkTold(known func(dir string) ([]dirnotify.Entry, bool)) (stale, renewed bool) {
	if known == nil {
		return rs.check()
	}
	var out []Stamp
	for i, st := range rs.Stamps {
		names, told := known(st.Path)
		if told && len(names) == 0 {
			continue // its entries are as they were
		}
		m := mtime(st.Path)
		if m == st.MTime && !st.Hot && !told {
			continue
		}
		if m == -1 || st.MTime == -1 {
			if m != st.MTime {
				return true, false
			}
			continue
		}
		cur, _ := readStamp(st.Path)
		if cur.Names != st.Names {
			return true, false
		}
		if cur != st {
			if out == nil {
				out = slices.Clone(rs.Stamps)
			}
			out[i] = cur
		}
	}
	if out != nil {
		rs.Stamps = out
		return false, true
	}
	return false, false
}

// patchDelta is how a patch changed the rules: added, the rules granted
// (a Restrictor adds them to its Landlock ruleset); rebuild, a rule was
// dropped whose file may still be reached — renamed away, or found gone
// by reading the directory (unlinked or renamed: nobody knows) — so the
// Landlock ruleset must be built again without it. A rule dropped for a
// file unlinked (the notifier saw it removed, not renamed) may stay in
// the Landlock ruleset: no path reaches that file any more.
type patchDelta struct {
	added   []rule
	rebuild bool
}

// rulesAt reports whether rules holds one on p or below.
func rulesAt(rules []Rule, p string) bool {
	for _, r := range rules {
		if r.Path == p || strings.HasPrefix(r.Path, p+"/") {
			return true
		}
	}
	return false
}

// apply changes set from d's entries as they were to now: false when that
// takes more than granting or dropping single entries.
//
// dl records the change; away, when not nil, is what the notifier said:
// the names it saw renamed out of dir, the others' files gone for good
// (nil: the directory was read, nobody knows).
func (d listed) apply(set *ruleSet, s Spec, dir string, now map[string]entKey, dl *patchDelta, away map[string]bool) bool {
	for name, k := range d.ents {
		if nk, ok := now[name]; ok && nk == k {
			continue
		}
		p := path.Join(dir, name)
		if away == nil || away[name] || set.holdsBelow(p) {
			dl.rebuild = dl.rebuild || set.holds(p)
		}
		if d.passed[name] || !d.drop(set, p, k) {
			return false
		}
	}
	for name, k := range now {
		if old, ok := d.ents[name]; ok && old == k {
			continue
		}
		if d.passed[name] || !d.grant(set, s, path.Join(dir, name), k, dl) {
			return false
		}
	}
	return true
}

// holds reports whether rs has a rule on p or below.
func (rs *ruleSet) holds(p string) bool { return rs.rules[p] != nil || rs.holdsBelow(p) }

// holdsBelow reports whether rs has a rule below p.
func (rs *ruleSet) holdsBelow(p string) bool {
	for _, q := range rs.order {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// drop removes the rule cover gave p, an entry gone (or changed type).
func (d listed) drop(set *ruleSet, p string, k entKey) bool {
	if k.typ&fs.ModeSymlink != 0 {
		return true // links are never granted
	}
	for _, c := range d.covers {
		if _, denied := slices.BinarySearch(c.deny, p); denied {
			continue
		}
		if holdsAny(p, c.deny) {
			return false
		}
	}
	set.remove(p)
	return true
}

// grant gives a new entry p what cover gives it.
func (d listed) grant(set *ruleSet, s Spec, p string, k entKey, dl *patchDelta) bool {
	if k.typ&fs.ModeSymlink != 0 {
		return true
	}
	if mayName(s, p) {
		return false
	}
	isDir := k.typ.IsDir()
	for _, c := range d.covers {
		if _, denied := slices.BinarySearch(c.deny, p); denied {
			continue
		}
		if holdsAny(p, c.deny) {
			return false
		}
		set.add(p, c.rights, isDir)
		r := rule{path: p, rights: c.rights, dir: isDir}
		if !isDir {
			r.rights &= fileRights
		}
		if r.rights != 0 {
			dl.added = append(dl.added, r)
		}
	}
	return true
}

// mayName reports whether a path of the Spec's other lists may name p or
// a path below it (its patterns matched component by component): their
// rules are computed by a compilation alone.
func mayName(s Spec, p string) bool {
	for _, q := range s.Public {
		if strings.Contains(q, "/") && patternMayName(q, p) {
			return true
		}
	}
	for _, l := range [][]string{s.Writable, s.Devices, s.Readable, s.NoRead, s.NoWrite} {
		for _, q := range l {
			if patternMayName(q, p) {
				return true
			}
		}
	}
	return false
}

// patternMayName reports whether pattern q, matched component by
// component, may name p or a path below it (true for a relative q).
func patternMayName(q, p string) bool {
	if !strings.HasPrefix(q, "/") {
		return true
	}
	pc := strings.Split(strings.TrimPrefix(p, "/"), "/")
	qc := strings.Split(strings.TrimPrefix(path.Clean(q), "/"), "/")
	if len(qc) < len(pc) {
		return false
	}
	for i := range pc {
		if ok, err := path.Match(qc[i], pc[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// ruleSetOf is rules as a ruleSet, to add to and remove from.
func ruleSetOf(rules []Rule) *ruleSet {
	set := &ruleSet{rules: make(map[string]*rule, len(rules))}
	for _, r := range rules {
		set.add(r.Path, r.Rights, r.Dir)
	}
	return set
}

// remove drops the rules on p and below.
func (rs *ruleSet) remove(p string) {
	order := rs.order[:0]
	for _, q := range rs.order {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(rs.rules, q)
			continue
		}
		order = append(order, q)
	}
	rs.order = order
}
