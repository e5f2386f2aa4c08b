package journal

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// OwnerRestorer is a TreeRestorer that can also put owners back: Chown
// sets the owner and group of path itself (a link, not what it points
// to). The runner's restorer is one; Restore needs it only where an owner
// differs from what the journal saved.
type OwnerRestorer interface {
	TreeRestorer
	Chown(ctx context.Context, path string, uid, gid int) error
}

// Owner is the "UID:GID" the journal keeps for an owner and group.
func Owner(uid, gid int) string { return strconv.Itoa(uid) + ":" + strconv.Itoa(gid) }

// ParseOwner reads Owner's form.
func ParseOwner(s string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("owner %q is not UID:GID", s)
	}
	if uid, err = nonNegative(u); err != nil {
		return 0, 0, fmt.Errorf("owner %q: %w", s, err)
	}
	if gid, err = nonNegative(g); err != nil {
		return 0, 0, fmt.Errorf("owner %q: %w", s, err)
	}
	return uid, gid, nil
}

// OwnerError is an owner undo could not put back: the file's content and
// mode are restored, its owner is not, and undo says so by name.
type OwnerError struct {
	Path       string
	Want, Have string // "UID:GID"
	Err        error
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("undo: could not restore the owner of %s to %s (it is %s): %v", e.Path, e.Want, e.Have, e.Err)
}

func (e *OwnerError) Unwrap() error { return e.Err }

// restoreOwners puts back the owners want gives (relative path → "UID:GID";
// "." is root itself) of the entries now at root, listed again after the
// restore: an entry the restore created belongs to whoever restored it.
// Every owner it cannot put back is an OwnerError, all of them joined.
func restoreOwners(ctx context.Context, w FileRestorer, root string, want map[string]string) error {
	if len(want) == 0 {
		return nil
	}
	tw, ok := w.(TreeRestorer)
	if !ok {
		return fmt.Errorf("undo: %s: this host's restorer cannot look at owners", root)
	}
	l, err := tw.ListTree(ctx, root)
	if err != nil {
		return fmt.Errorf("undo: check the owners under %s: %w", root, err)
	}
	ow, _ := w.(OwnerRestorer)
	var errs []error
	for _, e := range l.Entries {
		w, ok := want[e.Path]
		if have := Owner(e.UID, e.GID); !ok || w == have {
			continue
		} else {
			p := path.Join(root, e.Path)
			uid, gid, _ := ParseOwner(w) // checked when read
			err := errors.New("this host's restorer cannot change owners")
			if ow != nil {
				err = ow.Chown(ctx, p, uid, gid)
			}
			if err != nil {
				errs = append(errs, &OwnerError{Path: p, Want: w, Have: have, Err: err})
			}
		}
	}
	return errors.Join(errs...)
}
