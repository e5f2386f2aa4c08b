package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
)

// TreeReader lists and reads a host's files: what the state of a path
// that may be a directory is computed from (State).
type TreeReader interface {
	ReadFile(ctx context.Context, path string, w io.Writer) (int64, error)
	// ListTree lists the tree at root (TreeListCommand, ParseTreeListing);
	// nothing there is an error wrapping fs.ErrNotExist.
	ListTree(ctx context.Context, root string) (TreeListing, error)
}

// TreeRestorer is a FileRestorer that can also put directory trees back:
// the runner's restorer is one. Mkdir creates the directory path (its
// parent exists) with mode; Symlink creates the link path pointing to
// target; RemoveAll deletes path and everything under it, and succeeds
// when it is already gone.
type TreeRestorer interface {
	FileRestorer
	ListTree(ctx context.Context, root string) (TreeListing, error)
	Mkdir(ctx context.Context, path string, mode fs.FileMode) error
	Symlink(ctx context.Context, target, path string) error
	RemoveAll(ctx context.Context, path string) error
}

// TreeOpener is a TreeRestorer that can make a tree traversable again:
// OpenTree gives every directory at or under root that lacks u+rwx those
// bits, top down, without following links (`chmod -R 000 DIR` as a user
// other than root leaves DIR unreadable to that user: its tree cannot be
// listed to put it back). Restore sets each directory's saved mode after.
type TreeOpener interface {
	OpenTree(ctx context.Context, root string) error
}

// restoreTree puts the tree r saved back at r.Path, touching only what
// differs: what the tree did not have is removed (deepest first), missing
// or different entries are written back from their blobs, and modes are
// set, a directory's last (innermost first) so that a read-only one can
// be filled first.
func (j *Journal) restoreTree(ctx context.Context, w FileRestorer, r indexRecord) (Action, error) {
	tw, ok := w.(TreeRestorer)
	if !ok {
		return Action{}, fmt.Errorf("undo: restore %s: this host's restorer cannot put a directory tree back", r.Path)
	}
	fail := func(err error) (Action, error) {
		return Action{}, fmt.Errorf("undo: restore directory tree %s: %w", r.Path, err)
	}
	blob := filepath.Join(j.dir, strconv.Itoa(r.N)+".bin")
	b, err := os.ReadFile(blob)
	if err != nil {
		return fail(err)
	}
	m, err := parseManifest(b)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", blob, err))
	}
	if digest(m) != r.SHA256 {
		return fail(fmt.Errorf("saved manifest %s is corrupt (its digest differs)", blob))
	}
	want := map[string]manifestEntry{}
	for _, e := range m {
		want[e.Path] = e
	}
	cur := map[string]TreeEntry{}
	l, err := tw.ListTree(ctx, r.Path)
	if o, ok := w.(TreeOpener); ok && err != nil && !errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil {
		// A directory whose mode blocks this user: opened, listed again.
		if oerr := o.OpenTree(ctx, r.Path); oerr != nil {
			return fail(fmt.Errorf("%w; making it traversable: %w", err, oerr))
		}
		l, err = tw.ListTree(ctx, r.Path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fail(err)
	case l.Entries[0].Type != 'd':
		if err := tw.Remove(ctx, r.Path); err != nil {
			return fail(err)
		}
		l = TreeListing{}
	case len(l.Entries) > MaxTreeEntries:
		// Over the bound (only when forced: unchanged refused it): the
		// listing is not all of it, so it is removed whole and rebuilt.
		if err := tw.RemoveAll(ctx, r.Path); err != nil {
			return fail(err)
		}
		l = TreeListing{}
	default:
		for _, e := range l.Entries {
			cur[e.Path] = e
		}
	}
	bumped := map[string]bool{} // directories made writable for the restore
	for _, e := range l.Entries {
		if _, ok := cur[e.Path]; ok && e.Type == 'd' && e.Mode&0o700 != 0o700 {
			if err := tw.Chmod(ctx, path.Join(r.Path, e.Path), FileModeOf(e.Mode|0o700)); err != nil {
				return fail(err)
			}
			bumped[e.Path] = true
		}
	}
	for i := len(l.Entries) - 1; i >= 0 && len(cur) > 0; i-- {
		e := l.Entries[i]
		if w, ok := want[e.Path]; ok && w.Type == typeNames[e.Type] {
			continue
		}
		p := path.Join(r.Path, e.Path)
		rm := tw.Remove
		if e.Type == 'd' {
			rm = tw.RemoveAll
		}
		if err := rm(ctx, p); err != nil {
			return fail(err)
		}
		delete(cur, e.Path)
	}
	var written int64
	for _, e := range m {
		p := path.Join(r.Path, e.Path)
		c, has := cur[e.Path]
		switch e.Type {
		case "dir":
			if !has {
				if err := tw.Mkdir(ctx, p, 0o700); err != nil {
					return fail(err)
				}
			}
		case "symlink":
			if has && c.Link == e.Link {
				continue
			}
			if has {
				if err := tw.Remove(ctx, p); err != nil {
					return fail(err)
				}
			}
			if err := tw.Symlink(ctx, e.Link, p); err != nil {
				return fail(err)
			}
		case "file":
			n, err := j.restoreTreeFile(ctx, tw, p, e, c, has)
			if err != nil {
				return fail(err)
			}
			written += n
		}
	}
	for i := len(m) - 1; i >= 0; i-- {
		e := m[i]
		u, _ := strconv.ParseUint(e.Mode, 8, 32) // checked by parseManifest
		c, has := cur[e.Path]
		if e.Type != "dir" || has && !bumped[e.Path] && c.Mode == uint32(u) {
			continue
		}
		if err := tw.Chmod(ctx, path.Join(r.Path, e.Path), FileModeOf(uint32(u))); err != nil {
			return fail(err)
		}
	}
	owners := map[string]string{}
	for _, e := range m {
		if e.Owner != "" {
			owners[e.Path] = e.Owner
		}
	}
	a := Action{Path: r.Path, Bytes: written, Tree: len(m)}
	if err := restoreOwners(ctx, w, r.Path, owners); err != nil {
		return a, err
	}
	return a, nil
}

// restoreTreeFile puts one file of a tree back unless it already holds
// the saved content (then only its mode is set), and returns the bytes
// written.
func (j *Journal) restoreTreeFile(ctx context.Context, tw TreeRestorer, p string, e manifestEntry, c TreeEntry, has bool) (int64, error) {
	u, _ := strconv.ParseUint(e.Mode, 8, 32) // checked by parseManifest
	mode := FileModeOf(uint32(u))
	if has && c.Size == e.Size {
		if sum, _, err := hashFile(ctx, tw.ReadFile, p, e.Size); err == nil && sum == e.SHA256 {
			if c.Mode == uint32(u) {
				return 0, nil
			}
			return 0, tw.Chmod(ctx, p, mode)
		}
	}
	blob := filepath.Join(j.dir, strconv.Itoa(e.N)+".bin")
	content, err := os.ReadFile(blob)
	if err != nil {
		return 0, err
	}
	if sum := sha256.Sum256(content); int64(len(content)) != e.Size || hex.EncodeToString(sum[:]) != e.SHA256 {
		return 0, fmt.Errorf("saved copy %s of %s is corrupt (size or sha256 differs)", blob, p)
	}
	if has { // a read-only file cannot be written over; identity is not kept (no hard links were saved)
		if err := tw.Remove(ctx, p); err != nil {
			return 0, err
		}
	}
	n, err := tw.WriteFile(ctx, p, bytes.NewReader(content), mode)
	if err != nil {
		return 0, err
	}
	return n, tw.Chmod(ctx, p, mode)
}
