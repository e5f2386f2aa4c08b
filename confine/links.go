package confine

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Links inside protected hierarchies. A denied path that is itself a link,
// or lies behind links, is denied where it really is (resolveWatched). A
// link inside a denied directory is another matter: ~/.ssh/authorized_keys
// linked into ~/dotfiles (stow, yadm, home-manager) is denied as a name in
// ~/.ssh, but its target is reached by its own path, which the rules would
// grant. So the denied hierarchies lying in a LinksIn directory (the home:
// the system's directories need root to link from) are searched, bounded,
// for links, and each one's target — where it really is, the links on the
// way resolved — is denied as the hierarchy holding it is. The
// directories searched are watched (watch.go): a link made or moved there
// makes the rules stale.

// A target in a store of packages (Nix's, Guix's: home-manager links the
// home's files there) is left out: the store is world-readable by design
// and read-only, and denying an entry in it would list its hundred
// thousand entries as rules. So is, for writes, a target on a read-only
// file system.
var stores = []string{"/nix/store", "/gnu/store"}

// usefulTarget reports whether denying the target r of a link adds
// anything (write: for writes).
func usefulTarget(r string, write bool) bool {
	for _, st := range stores {
		if r == st || strings.HasPrefix(r, st+"/") {
			return false
		}
	}
	return !write || !readOnlyFS(r)
}

// Bounds of the search for links, per LinksIn directory: the protected
// hierarchies of a home are small (~/.ssh, ~/.config/systemd, ~/.vim).
const (
	linkDepth   = 3
	linkEntries = 4000
)

// linked returns the targets of the links found in the members of deny
// (resolved, sorted) that lie in a LinksIn directory, those worth
// denying (usefulTarget) for writes when write, else for reads.
func (s Spec) linked(w *watcher, deny []string, write bool) []string {
	var out []string
	for _, top := range s.LinksIn {
		n := 0
		for _, d := range deny {
			if d != top && strings.HasPrefix(d, top+"/") {
				out = linksUnder(w, d, 0, &n, out)
			}
		}
	}
	out = slices.DeleteFunc(out, func(r string) bool { return !usefulTarget(r, write) })
	slices.Sort(out)
	return slices.Compact(out)
}

// linksUnder appends the targets of the links at or below p.
func linksUnder(w *watcher, p string, depth int, n *int, out []string) []string {
	t, err := lstatType(p)
	if err != nil || *n >= linkEntries {
		return out
	}
	switch {
	case t&fs.ModeSymlink != 0:
		if r := resolveWatched(w, p); r != p {
			out = append(out, r)
		}
	case t.IsDir() && depth < linkDepth:
		for _, e := range w.dir(p) {
			if *n++; *n > linkEntries {
				break
			}
			if e.Type()&fs.ModeSymlink != 0 || e.Type().IsDir() && !slices.Contains(walkSkip, e.Name()) {
				out = linksUnder(w, path.Join(p, e.Name()), depth+1, n, out)
			}
		}
	}
	return out
}
