package confine

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// Secrets found, not listed. A Spec's NoRead names the secrets a policy
// knows by their place; a home holds more whose place nobody listed
// (~/.npmrc, a key not named id_*, a project's .env). When the rules are
// computed, two more sets join NoRead:
//
//   - the dot-entries of each HideDots directory (the home) but those
//     DotsOK names: credentials and histories live there, and which ones
//     a given home holds cannot be known in advance;
//   - the entries named like a secret (Secrets, base-name patterns) found
//     by a bounded walk of each FindIn directory (the home, the working
//     directory).
//
// Landlock rules are per hierarchy: a denied entry makes its directory
// listed and every other entry granted on its own (cover), as for the
// policy's own NoRead. The walk is bounded in depth, entries and time
// (walkDepth, walkEntries, walkTime): what it did not reach is not found.
// It does not descend into what Secrets already hides, into the hidden
// dot-directories, or into trees that hold code, not secrets
// (walkSkip). The directories it read down to watchDepth are watched
// (watch.go): a secret-shaped file appearing there makes the rules stale,
// as does any new entry beside one found (its directory is listed).

// Bounds of the walk for secrets, per FindIn directory.
const (
	walkDepth   = 6
	walkEntries = 20000
	walkTime    = 150 * time.Millisecond
	// watchDepth: the directories read at this depth or less are
	// watched (the FindIn directory is depth 0).
	watchDepth = 2
)

// walkSkip are directories the walk does not enter: package trees and
// toolchains (many files, no secrets of the user's), and git's own
// (its hooks are found by name, Spec.GitHooks, not by walking).
var walkSkip = []string{"node_modules", ".git", "__pycache__", "site-packages", "dist-packages", ".venv", "venv",
	".rustup", ".nvm", ".pyenv", ".rbenv", ".sdkman", ".npm", ".cache", "go", "snap"}

// hidden returns the dot-entries of the HideDots directories that DotsOK
// does not name, their links resolved too (a ~/.npmrc linked into
// ~/dotfiles hides its target as well); the directories are watched.
func (s Spec) hidden(w *watcher) []string {
	var out []string
	for _, d := range s.HideDots {
		for _, e := range w.dir(d) {
			if !strings.HasPrefix(e.Name(), ".") || slices.Contains(s.DotsOK, e.Name()) {
				continue
			}
			out = appendResolved(w, out, path.Join(d, e.Name()), e.Type())
		}
	}
	return out
}

// appendResolved appends p and, for a link, where it leads.
func appendResolved(w *watcher, out []string, p string, typ fs.FileMode) []string {
	out = append(out, p)
	if typ&fs.ModeSymlink != 0 {
		if r := resolveWatched(w, p); r != p && usefulTarget(r, false) {
			out = append(out, r)
		}
	}
	return out
}

// found walks each FindIn directory for entries whose name matches a
// Secrets pattern, within the bounds; gitRuns are the hooks and
// configuration of the git repositories it met in a HideDots directory
// (the home), which git runs or obeys on its next command: a medium
// step may not write them (they join NoWrite).
func (s Spec) found(w *watcher) (secrets, gitRuns []string) {
	if len(s.Secrets) == 0 {
		return nil, nil
	}
	seen, names := map[string]bool{}, newNameMatcher(s.Secrets)
	for _, root := range s.FindIn {
		if t, err := statType(root); err != nil || !t.IsDir() {
			continue
		}
		fw := finder{s: s, names: names, w: w, seen: seen, deadline: time.Now().Add(walkTime),
			maxEntries: walkEntries, maxDepth: walkDepth, watchTo: watchDepth}
		fw.walk(resolve(root))
		secrets, gitRuns = append(secrets, fw.out...), append(gitRuns, fw.git...)
	}
	return secrets, gitRuns
}

// inHome reports whether p lies in a HideDots directory.
func (s Spec) inHome(p string) bool {
	for _, d := range s.HideDots {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// finder is one bounded walk, breadth first: the shallow places, where
// secrets usually are, before the deep ones.
type finder struct {
	s        Spec
	names    *nameMatcher // s.Secrets
	w        *watcher
	seen     map[string]bool
	entries  int
	deadline time.Time
	out, git []string
	// Its bounds: entries, depth, and the depth to which the directories
	// read are watched.
	maxEntries, maxDepth, watchTo int
	// dots is a directory whose dot-entries but DotsOK the walk does not
	// enter, beside HideDots (another account's home).
	dots string
}

func (f *finder) walk(root string) {
	type item struct {
		dir   string
		depth int
	}
	queue := []item{{root, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if f.seen[it.dir] {
			continue
		}
		f.seen[it.dir] = true
		var ents []dirEntry
		if it.depth <= f.watchTo {
			ents = f.w.dir(it.dir)
		} else {
			ents, _ = readDir(it.dir)
		}
		hideDots := slices.Contains(f.s.HideDots, it.dir) || it.dir == f.dots
		for _, e := range ents {
			if f.entries++; f.entries > f.maxEntries || f.entries%256 == 0 && time.Now().After(f.deadline) {
				return
			}
			name := e.Name()
			p := path.Join(it.dir, name)
			if f.names.match(name) {
				f.out = appendResolved(f.w, f.out, p, e.Type())
				continue // what it holds is hidden with it
			}
			if name == ".git" && e.Type().IsDir() && f.s.inHome(p) {
				f.git = append(f.git, p+"/hooks", p+"/config")
			}
			if !e.Type().IsDir() || it.depth+1 > f.maxDepth || slices.Contains(walkSkip, name) ||
				hideDots && strings.HasPrefix(name, ".") && !slices.Contains(f.s.DotsOK, name) {
				continue
			}
			queue = append(queue, item{p, it.depth + 1})
		}
	}
}

// secretName reports whether a base name matches a Secrets pattern.
func (s Spec) secretName(name string) bool {
	for _, pat := range s.Secrets {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// Hides reports whether the rules computed from s deny reading p (an
// absolute, clean path) as a found secret: a dot-entry of a HideDots
// directory that DotsOK does not name, or a name Secrets matches under a
// FindIn directory — by its name alone, whether or not the walk reached
// it (for explanations, not enforcement).
func (s Spec) Hides(p string) bool {
	for _, d := range s.HideDots {
		if rest, ok := strings.CutPrefix(p, d+"/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			if strings.HasPrefix(first, ".") && !slices.Contains(s.DotsOK, first) {
				return true
			}
		}
	}
	for _, d := range s.FindIn {
		rest, ok := strings.CutPrefix(p, d+"/")
		if !ok {
			continue
		}
		for _, c := range strings.Split(rest, "/") {
			if s.secretName(c) {
				return true
			}
		}
	}
	return false
}
