package confine

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Access rights, as Landlock numbers them (include/uapi/linux/landlock.h).
const (
	accessExecute    = 1 << 0
	accessWriteFile  = 1 << 1
	accessReadFile   = 1 << 2
	accessReadDir    = 1 << 3
	accessRemoveDir  = 1 << 4
	accessRemoveFile = 1 << 5
	accessMakeChar   = 1 << 6
	accessMakeDir    = 1 << 7
	accessMakeReg    = 1 << 8
	accessMakeSock   = 1 << 9
	accessMakeFifo   = 1 << 10
	accessMakeBlock  = 1 << 11
	accessMakeSym    = 1 << 12
	accessRefer      = 1 << 13 // ABI 2
	accessTruncate   = 1 << 14 // ABI 3

	// fileRights are the rights a rule on a non-directory may hold.
	fileRights = accessExecute | accessWriteFile | accessReadFile | accessTruncate
	readRights = accessExecute | accessReadFile | accessReadDir
	// writeRights change what a hierarchy holds.
	writeRights = accessWriteFile | accessRemoveDir | accessRemoveFile | accessMakeChar | accessMakeDir |
		accessMakeReg | accessMakeSock | accessMakeFifo | accessMakeBlock | accessMakeSym | accessRefer | accessTruncate
)

// handledFS is what a ruleset handles on a kernel of Landlock ABI abi:
// everything it knows up to truncate (ioctl on devices is left alone: the
// devices a confined step may open at all are listed).
func handledFS(abi int) uint64 {
	switch {
	case abi >= 3:
		return readRights | writeRights
	case abi == 2:
		return (readRights | writeRights) &^ accessTruncate
	}
	return (readRights | writeRights) &^ (accessTruncate | accessRefer)
}

// rule grants rights on the hierarchy at path (a file: that file).
type rule struct {
	path   string
	rights uint64
	dir    bool
}

// ruleSet accumulates rules by path, their rights joined.
type ruleSet struct {
	order []string
	rules map[string]*rule
}

func (rs *ruleSet) add(p string, rights uint64, dir bool) {
	if rights == 0 {
		return
	}
	if r, ok := rs.rules[p]; ok {
		r.rights |= rights
		return
	}
	if rs.rules == nil {
		rs.rules = map[string]*rule{}
	}
	rs.rules[p] = &rule{path: p, rights: rights, dir: dir}
	rs.order = append(rs.order, p)
}

// list returns the rules in the order they were first added, file rules
// holding file rights only.
func (rs *ruleSet) list() []rule {
	out := make([]rule, 0, len(rs.order))
	for _, p := range rs.order {
		r := *rs.rules[p]
		if !r.dir {
			r.rights &= fileRights
		}
		if r.rights != 0 {
			out = append(out, r)
		}
	}
	return out
}

// rules computes what s grants, from the host's file system: Landlock only
// grants, so "everything but D" is every hierarchy beside D's members and
// their ancestors. An ancestor gets only anc (listing, for reads; nothing,
// for writes: a new entry beside a protected one could be the protected
// name itself), and its entries are visited in turn. Symbolic links are
// never granted: what they point to is reached by its own path.
func (s Spec) rules() []rule {
	rules, _ := s.compile()
	return rules
}

// compile is rules, and the stamps of the directories they depend on
// (watch.go): those whose entries the rules list (the ancestors of denied
// paths, the NoRead directories searched for Public names) and those
// where a denied path's links are looked up or its glob matched.
func (s Spec) compile() ([]rule, []Stamp) {
	var w watcher
	return s.compileWatched(&w), w.list()
}

// compileWatched is compile's rules, w recording what they depend on.
func (s Spec) compileWatched(w *watcher) []rule {
	var rs ruleSet
	listed := expandWatched(w, s.NoRead)
	// The secrets found (secrets.go) are denied as the listed ones are;
	// Public base names are matched in the listed directories alone.
	secrets, gitRuns := s.found(w)
	othersRead, othersWrite := s.others(w)
	noRead := slices.Concat(listed, s.linked(w, listed, false), s.hidden(w), othersRead, secrets)
	slices.Sort(noRead)
	noRead = slices.Compact(noRead)
	if len(s.Readable) == 0 {
		coverTop(&rs, w, "/", noRead, readRights, accessReadDir)
	}
	for _, p := range s.Readable {
		for _, m := range glob(p) {
			coverTop(&rs, w, resolve(m), noRead, readRights, accessReadDir)
		}
	}
	for _, p := range public(w, s.Public, listed) {
		if t, err := statType(p); err == nil {
			rs.add(p, readRights, t.IsDir())
		}
	}
	if s.Write {
		// The git hooks and configuration found in the home
		// (secrets.go) are protected too.
		// So are the other accounts' dot-entries (accounts.go).
		noWrite := slices.Concat(expandWatched(w, s.NoWrite), gitRuns, othersWrite)
		// The targets of the links in protected hierarchies (links.go).
		noWrite = slices.Concat(noWrite, s.linked(w, noWrite, true))
		slices.Sort(noWrite)
		coverTop(&rs, w, "/", slices.Compact(noWrite), writeRights, 0)
	}
	for _, p := range s.Writable {
		for _, m := range glob(p) {
			if t, err := statType(m); err == nil {
				rs.add(resolve(m), writeRights, t.IsDir())
				if len(s.Readable) > 0 {
					coverTop(&rs, w, resolve(m), noRead, readRights, accessReadDir)
				}
			}
		}
	}
	for _, d := range s.Devices {
		for _, p := range glob(d) {
			if t, err := statType(p); err == nil {
				rs.add(p, readRights|writeRights, t.IsDir())
			}
		}
	}
	return rs.list()
}

// coverTop is cover of the hierarchy at p, whatever it is.
func coverTop(rs *ruleSet, w *watcher, p string, deny []string, rights, anc uint64) {
	t, err := lstatType(p)
	if err != nil {
		return
	}
	cover(rs, w, p, t, deny, rights, anc)
}

// cover grants rights on p (of type typ) and below, except on the members
// of deny and below; deny is sorted. A directory holding a member is
// listed (and watched), its entries covered in turn.
func cover(rs *ruleSet, w *watcher, p string, typ fs.FileMode, deny []string, rights, anc uint64) {
	if _, ok := slices.BinarySearch(deny, p); ok {
		return
	}
	if typ&fs.ModeSymlink != 0 {
		return
	}
	if !holdsAny(p, deny) {
		rs.add(p, rights, typ.IsDir())
		return
	}
	rs.add(p, anc, true)
	for _, e := range w.listing(p, deny, rights) {
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		cover(rs, w, path.Join(p, e.Name()), e.Type(), deny, rights, anc)
	}
}

// holdsAny reports whether a member of deny lies strictly below dir.
func holdsAny(dir string, deny []string) bool {
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	i, _ := slices.BinarySearch(deny, prefix)
	return i < len(deny) && strings.HasPrefix(deny[i], prefix)
}

// expand resolves each path as the kernel will see it: globs expanded,
// symbolic links in the part that exists resolved. The result is sorted and
// without duplicates.
func expand(paths []string) []string {
	var w watcher
	return expandWatched(&w, paths)
}

// expandWatched is expand, recording in w the directories the globs and
// links were looked up in.
func expandWatched(w *watcher, paths []string) []string {
	var out []string
	for _, p := range paths {
		for _, m := range globWatched(w, p) {
			out = append(out, resolveWatched(w, m))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// glob expands p's metacharacters as filepath.Glob does; a literal path is
// kept whether or not it exists. What it looks at is not watched: it
// finds what is granted, which a stale ruleset can only grant too little
// of (watch.go).
func glob(p string) []string {
	var w watcher
	return globWatched(&w, p)
}

// resolve follows the symbolic links of p's longest existing prefix, not
// watched (as glob).
func resolve(p string) string {
	var w watcher
	return resolveWatched(&w, p)
}

// public lists the files the Public entries name: absolute ones as they
// are, base-name patterns matched in each NoRead directory (noRead, as
// expanded; those directories are watched: a new match is readable at the
// next command).
func public(w *watcher, pub, noRead []string) []string {
	var out []string
	for _, p := range pub {
		if strings.Contains(p, "/") {
			for _, m := range glob(p) {
				out = append(out, resolve(m))
			}
			continue
		}
		for _, d := range noRead {
			if t, err := statType(d); err != nil || !t.IsDir() {
				continue // not a directory: nothing matches in it
			}
			for _, e := range w.dir(d) {
				if ok, err := path.Match(p, e.Name()); err == nil && ok {
					out = append(out, path.Join(d, e.Name()))
				}
			}
		}
	}
	return out
}
