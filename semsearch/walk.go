package semsearch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
)

// Files lists and reads files on a host (a transport). ReadDir describes a
// directory's entries without following symbolic links.
type Files interface {
	ReadDir(ctx context.Context, dir string) ([]fs.FileInfo, error)
	ReadFile(ctx context.Context, name string, w io.Writer) (int64, error)
}

// Limits bound what one search lists and reads.
type Limits struct {
	MaxFiles      int   // text files indexed
	MaxDirs       int   // directories listed
	MaxFileBytes  int64 // a larger file is skipped
	MaxTotalBytes int64 // bytes read in one search
}

// DefaultLimits are the bounds of a search when Options leaves them zero.
var DefaultLimits = Limits{MaxFiles: 2000, MaxDirs: 5000, MaxFileBytes: 1 << 20, MaxTotalBytes: 32 << 20}

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.MaxFiles > 0 {
		d.MaxFiles = l.MaxFiles
	}
	if l.MaxDirs > 0 {
		d.MaxDirs = l.MaxDirs
	}
	if l.MaxFileBytes > 0 {
		d.MaxFileBytes = l.MaxFileBytes
	}
	if l.MaxTotalBytes > 0 {
		d.MaxTotalBytes = l.MaxTotalBytes
	}
	return d
}

// vcsDirs are not searched: their content is the repository's history,
// mostly compressed.
var vcsDirs = []string{".git", ".hg", ".svn"}

// candidate is a file the walk found worth indexing.
type candidate struct {
	path  string
	size  int64
	mtime int64
}

// ValidGlob checks a glob pattern: without '/', it matches a file's base
// name (like find -name); with one, its path relative to the directory.
func ValidGlob(glob string) error {
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("glob %q: %w", glob, err)
	}
	return nil
}

func matchGlob(glob, rel string) bool {
	if glob == "" {
		return true
	}
	name := rel
	if !slices.Contains([]byte(glob), '/') {
		name = path.Base(rel)
	}
	ok, _ := path.Match(glob, name)
	return ok
}

// walk lists root breadth-first, in name order, and returns the regular
// files to index. What it leaves out is counted in sk. An error listing
// root itself is returned; below it, an unreadable directory is skipped.
func walk(ctx context.Context, fsys Files, root, glob string, skip func(string) string, lim Limits, sk *skips) ([]candidate, error) {
	var out []candidate
	queue := []string{root}
	dirs := 0
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if dirs >= lim.MaxDirs {
			sk.add("directories over the bound of "+fmt.Sprint(lim.MaxDirs), dir)
			continue
		}
		dirs++
		ents, err := fsys.ReadDir(ctx, dir)
		if err != nil {
			if dir == root || ctx.Err() != nil {
				return nil, err
			}
			sk.add("unreadable", dir+": "+reason(err))
			continue
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, fi := range ents {
			p := path.Join(dir, fi.Name())
			switch mode := fi.Mode(); {
			case mode.IsDir():
				if slices.Contains(vcsDirs, fi.Name()) {
					continue
				}
				if why := skipped(skip, p); why != "" {
					sk.add(why, p)
					continue
				}
				queue = append(queue, p)
			case mode&fs.ModeSymlink != 0:
				sk.add("symbolic links (not followed)", p)
			case !mode.IsRegular():
				// devices, sockets, pipes: not text files
			case !matchGlob(glob, p[len(root):]):
			default:
				if why := skipped(skip, p); why != "" {
					sk.add(why, p)
					continue
				}
				if fi.Size() > lim.MaxFileBytes {
					sk.add(fmt.Sprintf("larger than %d bytes", lim.MaxFileBytes), p)
					continue
				}
				if len(out) >= lim.MaxFiles {
					sk.add(fmt.Sprintf("files over the bound of %d", lim.MaxFiles), p)
					continue
				}
				out = append(out, candidate{path: p, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
			}
		}
	}
	return out, nil
}

func skipped(skip func(string) string, p string) string {
	if skip == nil {
		return ""
	}
	return skip(p)
}

func reason(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "gone"
	}
	return err.Error()
}

// skips counts what a search left out, by reason, keeping a few examples.
type skips struct {
	order []string
	n     map[string]int
	ex    map[string][]string
}

const skipExamples = 3

func (s *skips) add(why, p string) {
	if s.n == nil {
		s.n, s.ex = map[string]int{}, map[string][]string{}
	}
	if s.n[why] == 0 {
		s.order = append(s.order, why)
	}
	s.n[why]++
	if len(s.ex[why]) < skipExamples {
		s.ex[why] = append(s.ex[why], p)
	}
}

func (s *skips) clone() skips {
	c := skips{order: slices.Clone(s.order), n: map[string]int{}, ex: map[string][]string{}}
	for k, v := range s.n {
		c.n[k] = v
	}
	for k, v := range s.ex {
		c.ex[k] = slices.Clone(v)
	}
	return c
}
