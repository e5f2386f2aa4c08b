package confine

import (
	"os"
	"path"
	"path/filepath"
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

// compile is rules, and the directories whose entries the rules list
// (the ancestors of denied paths, the NoRead directories searched for
// Public names): when one changes, the rules must be computed again.
func (s Spec) compile() ([]rule, []string) {
	var rs ruleSet
	var listed []string
	noRead := expand(s.NoRead)
	if len(s.Readable) == 0 {
		cover(&rs, &listed, "/", noRead, readRights, accessReadDir)
	}
	for _, p := range s.Readable {
		for _, m := range glob(p) {
			cover(&rs, &listed, resolve(m), noRead, readRights, accessReadDir)
		}
	}
	for _, p := range public(s.Public, s.NoRead) {
		if fi, err := os.Stat(p); err == nil {
			rs.add(p, readRights, fi.IsDir())
		}
	}
	for _, p := range s.Public {
		if !strings.Contains(p, "/") {
			listed = append(listed, noRead...)
			break
		}
	}
	if s.Write {
		cover(&rs, &listed, "/", expand(s.NoWrite), writeRights, 0)
	}
	for _, p := range s.Writable {
		for _, m := range glob(p) {
			if fi, err := os.Stat(m); err == nil {
				rs.add(resolve(m), writeRights, fi.IsDir())
				if len(s.Readable) > 0 {
					cover(&rs, &listed, resolve(m), noRead, readRights, accessReadDir)
				}
			}
		}
	}
	for _, d := range s.Devices {
		for _, p := range glob(d) {
			if fi, err := os.Stat(p); err == nil {
				rs.add(p, readRights|writeRights, fi.IsDir())
			}
		}
	}
	slices.Sort(listed)
	return rs.list(), slices.Compact(listed)
}

// cover grants rights on p and below, except on the members of deny and
// below; deny is sorted.
func cover(rs *ruleSet, listed *[]string, p string, deny []string, rights, anc uint64) {
	if _, ok := slices.BinarySearch(deny, p); ok {
		return
	}
	if !holdsAny(p, deny) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			rs.add(p, rights, fi.IsDir())
		}
		return
	}
	rs.add(p, anc, true)
	*listed = append(*listed, p)
	ents, err := os.ReadDir(p)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		cover(rs, listed, path.Join(p, e.Name()), deny, rights, anc)
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
	var out []string
	for _, p := range paths {
		for _, m := range glob(p) {
			out = append(out, resolve(m))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// glob expands p's metacharacters; a literal path is kept whether or not
// it exists.
func glob(p string) []string {
	if !strings.ContainsAny(p, "*?[") {
		return []string{p}
	}
	m, _ := filepath.Glob(p)
	return m
}

// resolve follows the symbolic links of p's longest existing prefix.
func resolve(p string) string {
	rest := ""
	for q := p; ; {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return path.Join(r, rest)
		}
		parent := path.Dir(q)
		if parent == q {
			return p
		}
		rest = path.Join(path.Base(q), rest)
		q = parent
	}
}

// public lists the files the Public entries name: absolute ones as they
// are, base-name patterns matched in each NoRead directory.
func public(pub, noRead []string) []string {
	var out []string
	for _, p := range pub {
		if strings.Contains(p, "/") {
			for _, m := range glob(p) {
				out = append(out, resolve(m))
			}
			continue
		}
		for _, d := range expand(noRead) {
			m, _ := filepath.Glob(path.Join(d, p))
			out = append(out, m...)
		}
	}
	return out
}
