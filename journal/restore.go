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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrChangedSince marks a file Restore skipped because it changed after
// the session last changed it (see RestoreOptions.Force).
var ErrChangedSince = errors.New("changed since the session")

// FileRestorer puts files back on a host; the runner adapts a transport to
// it (transport.Transport has WriteFile and ReadFile with these
// signatures). WriteFile replaces path with r's content and perm, returning
// the bytes written; Remove deletes path and succeeds when it is already
// gone; ReadFile streams path's current content into w (a missing file
// wraps fs.ErrNotExist); Chmod sets path's mode, setuid, setgid and sticky
// bits included (fs.ModeSetuid, fs.ModeSetgid, fs.ModeSticky); RemoveDir
// deletes the directory path only if it is empty, and succeeds when it is
// already gone.
type FileRestorer interface {
	WriteFile(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error)
	Remove(ctx context.Context, path string) error
	RemoveDir(ctx context.Context, path string) error
	ReadFile(ctx context.Context, path string, w io.Writer) (int64, error)
	Chmod(ctx context.Context, path string, mode fs.FileMode) error
}

// RestoreOptions change what Restore does.
type RestoreOptions struct {
	// Force restores files that changed after the session last changed
	// them, overwriting those later changes.
	Force bool
	// As returns the restorer acting as user (become, sudo) for the files
	// the session changed as that user; nil: such files are not restored
	// and their errors say so.
	As func(user string) (FileRestorer, error)
}

// UnixMode returns m's permission, setuid, setgid and sticky bits as Unix
// mode bits (0o4755 for a setuid 0755 file). Bits 0o7000 given literally
// are kept too.
func UnixMode(m fs.FileMode) uint32 {
	u := uint32(m) & 0o7777
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// FileModeOf is the inverse of UnixMode: Unix mode bits as an fs.FileMode
// with the setuid, setgid and sticky flags Go uses.
func FileModeOf(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// Action is what Restore did to one file.
type Action struct {
	Path string
	// Removed: the file did not exist before the session and was removed;
	// otherwise Bytes were written back.
	Removed bool
	Bytes   int64
	// Tree is the number of entries of a directory tree put back (Bytes
	// were written, the rest was still as saved).
	Tree int
	// OwnerLeft: content and modes are back but an owner is not (the
	// restore's error says which, an OwnerError).
	OwnerLeft bool
	// As is the user the file was put back as through become (sudo), as
	// the session had changed it; "" for the login user.
	As string
}

// String says it in words: "restored /x (12 bytes)",
// "removed /y (did not exist before)" or
// "restored directory tree /z (5 entries, 12 bytes written)".
func (a Action) String() string {
	if a.OwnerLeft {
		a.OwnerLeft = false
		return a.String() + " — but not its owner (below)"
	}
	if a.Tree > 0 {
		return fmt.Sprintf("restored directory tree %s (%d entries, %d bytes written)", a.Path, a.Tree, a.Bytes)
	}
	if a.Removed {
		return fmt.Sprintf("removed %s (did not exist before)", a.Path)
	}
	return fmt.Sprintf("restored %s (%d bytes)", a.Path, a.Bytes)
}

// Restore puts every file the session changed on this host back as it was
// before the session, newest change first, and marks the session restored.
// A file that fails is reported in the error and the others are still
// restored; the mark is only written when all succeeded. A restored
// session returns ErrAlreadyRestored and does nothing. See RestoreWith.
func (j *Journal) Restore(ctx context.Context, w FileRestorer) ([]Action, error) {
	return j.RestoreWith(ctx, w, RestoreOptions{})
}

// RestoreWith is Restore with options. Unless opt.Force, a file whose
// current content is neither what the session last gave it (see Changed)
// nor what it had before the session is skipped with an error wrapping
// ErrChangedSince ("skipped /x: changed since session S (use --force to
// overwrite)"), and the session is not marked restored, so that a forced
// undo can follow. A restored file also gets its recorded mode back.
func (j *Journal) RestoreWith(ctx context.Context, w FileRestorer, opt RestoreOptions) ([]Action, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restored {
		return nil, fmt.Errorf("undo session %s on %s: %w", j.session, j.host, ErrAlreadyRestored)
	}
	all, err := readIndex(filepath.Join(j.dir, indexFileName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("undo session %s: %w", j.session, err)
	}
	var recs []indexRecord
	first := map[string]bool{}
	lastNew := map[string]string{} // path → the content the session last gave it
	for _, r := range all {
		if r.Host != j.host {
			continue
		}
		switch {
		case r.Restored:
			return nil, fmt.Errorf("undo session %s on %s: %w", j.session, j.host, ErrAlreadyRestored)
		case r.Changed:
			lastNew[r.Path] = r.NewSHA256
		case !first[r.Path]:
			first[r.Path] = true
			recs = append(recs, r)
		}
	}
	var actions []Action
	var errs []error
	// Every file is checked before anything is restored: putting back a
	// file inside a directory tree the session also changed would
	// otherwise make the tree look changed since.
	type todo struct {
		r  indexRecord
		rw FileRestorer
	}
	var todos []todo
	// What the session left unreadable (chmod 0 DIR) hides what it
	// changed under it from the checks and the restores: it is made
	// traversable again first (its saved mode is put back after, or it
	// is removed as the session's own).
	for _, r := range recs {
		if lastNew[r.Path] != Unreadable || r.As != "" {
			continue
		}
		if o, ok := w.(TreeOpener); ok {
			if err := o.OpenTree(ctx, r.Path); err != nil {
				errs = append(errs, fmt.Errorf("undo: %s: %w", r.Path, err))
			}
		}
	}
	for _, r := range slices.Backward(recs) {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(append(errs, fmt.Errorf("undo session %s: %w", j.session, err))...)
		}
		rw := w
		if r.As != "" {
			if opt.As == nil {
				errs = append(errs, fmt.Errorf("undo: %s was changed as %s through become: restore it with become", r.Path, r.As))
				continue
			}
			var err error
			if rw, err = opt.As(r.As); err != nil {
				errs = append(errs, fmt.Errorf("undo: %s (changed as %s): %w", r.Path, r.As, err))
				continue
			}
		}
		// A tree with no record of what the session left is compared with
		// what it saved only: its restore removes what it did not have.
		if want, ok := lastNew[r.Path]; (ok || r.Tree) && !opt.Force {
			if err := j.unchanged(ctx, rw, r, want); err != nil && !(r.Tree && !ok && blocked(err, rw)) {
				errs = append(errs, err)
				continue
			}
		}
		todos = append(todos, todo{r, rw})
	}
	for _, t := range todos {
		if err := ctx.Err(); err != nil {
			return actions, errors.Join(append(errs, fmt.Errorf("undo session %s: %w", j.session, err))...)
		}
		a, err := j.restoreOne(ctx, t.rw, t.r, lastNew[t.r.Path])
		a.As = t.r.As
		if err != nil {
			if oe := (*OwnerError)(nil); errors.As(err, &oe) && a.Path != "" {
				a.OwnerLeft = true
				actions = append(actions, a) // put back but for its owner, which the error names
			}
			errs = append(errs, err)
			continue
		}
		actions = append(actions, a)
	}
	if len(errs) > 0 {
		return actions, errors.Join(errs...)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if err := j.appendIndex(indexRecord{Host: j.host, Time: time.Now().UTC(), Restored: true}); err != nil {
		return actions, fmt.Errorf("undo session %s: mark restored: %w", j.session, err)
	}
	j.restored = true
	return actions, nil
}

// unchanged checks that r.Path holds what the session last left there
// (want: a content's SHA-256, Absent, or a tree's state), or already what
// it had before the session (an undo that stopped half way); anything
// else is a later change.
func (j *Journal) unchanged(ctx context.Context, w FileRestorer, r indexRecord, want string) error {
	b := j.Bounds()
	got, err := stateOf(ctx, w, r.Path, b)
	switch {
	case want == Unreadable && ctx.Err() == nil:
		// Left unreadable: what it held then was not read, so whether it
		// changed since cannot be told; Restore may have opened it.
		return nil
	case err != nil:
		return fmt.Errorf("undo: check %s: %w", r.Path, err)
	}
	before := Absent
	switch {
	case r.Tree:
		before = TreeStatePrefix + r.SHA256
	case r.Existed:
		before = r.SHA256
	}
	if got == want && got != TooLarge || got == before {
		return nil
	}
	ce := &ChangedError{Path: r.Path, Session: j.session}
	switch {
	case got == TooLarge:
		ce.Why = "it now holds more than undo compares (" + b.String() + ")"
	case want == TooLarge:
		ce.Why = "the session left it holding more than undo compares (" + b.String() + ")"
	}
	return ce
}

// blocked reports that a tree's state could not be read because its mode
// blocks the user (chmod -R 000 DIR, not as root) and w can open it: the
// session's run could not record what it left either (and warned that undo
// would not notice later changes), so it is restored as saved.
func blocked(err error, w FileRestorer) bool {
	_, ok := w.(TreeOpener)
	return ok && errors.Is(err, fs.ErrPermission)
}

// ChangedError is a file Restore skipped: it changed after the session
// last changed it. It wraps ErrChangedSince.
type ChangedError struct {
	Path, Session string
	// Why, when set, says why whether it changed cannot be told: it is
	// over the bounds undo hashes within (StateBounds).
	Why string
}

func (e *ChangedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("skipped %s: %s, so whether it changed since session %s cannot be told (use --force to overwrite)",
			e.Path, e.Why, e.Session)
	}
	return fmt.Sprintf("skipped %s: changed since session %s (use --force to overwrite)", e.Path, e.Session)
}

func (e *ChangedError) Unwrap() error { return ErrChangedSince }

// restoreOne puts r.Path back; last is the state the session last left it
// in ("" when not recorded).
func (j *Journal) restoreOne(ctx context.Context, w FileRestorer, r indexRecord, last string) (Action, error) {
	if r.Tree {
		return j.restoreTree(ctx, w, r)
	}
	if tw, ok := w.(TreeRestorer); ok && !r.Existed && !r.Dir && strings.HasPrefix(last, TreeStatePrefix) {
		// A directory the session put where nothing was (mv DIR NEW, cp -r):
		// checked above to be as the session left it, unless forced.
		if err := tw.RemoveAll(ctx, r.Path); err != nil {
			return Action{}, fmt.Errorf("undo: remove directory tree %s (the session created it): %w", r.Path, err)
		}
		return Action{Path: r.Path, Removed: true}, nil
	}
	if r.Dir {
		if err := w.RemoveDir(ctx, r.Path); err != nil {
			return Action{}, fmt.Errorf("undo: remove directory %s (the session created it): %w", r.Path, err)
		}
		return Action{Path: r.Path, Removed: true}, nil
	}
	if !r.Existed {
		if err := w.Remove(ctx, r.Path); err != nil {
			return Action{}, fmt.Errorf("undo: remove %s: %w", r.Path, err)
		}
		return Action{Path: r.Path, Removed: true}, nil
	}
	blob := filepath.Join(j.dir, strconv.Itoa(r.N)+".bin")
	content, err := os.ReadFile(blob)
	if err != nil {
		return Action{}, fmt.Errorf("undo: restore %s: %w", r.Path, err)
	}
	if sum := sha256.Sum256(content); int64(len(content)) != r.Size || hex.EncodeToString(sum[:]) != r.SHA256 {
		return Action{}, fmt.Errorf("undo: restore %s: saved copy %s is corrupt (size or sha256 differs)", r.Path, blob)
	}
	u, _ := strconv.ParseUint(r.Mode, 8, 32) // validated by parseIndex
	mode := FileModeOf(uint32(u))
	// WriteFile makes a new file, owned by whoever restores it: the owner
	// the journal kept is put back after it, or else the one the file has
	// now (an owner the session did not change stays).
	owner := r.Owner
	if tw, ok := w.(TreeRestorer); ok {
		l, err := tw.ListTree(ctx, r.Path)
		switch {
		case err != nil:
		case l.Entries[0].Type == 'd':
			// The session put a directory where the file was (rm f;
			// mkdir f), checked above to be as the session left it:
			// it goes, and the file comes back.
			if err := tw.RemoveAll(ctx, r.Path); err != nil {
				return Action{}, fmt.Errorf("undo: restore %s: remove the directory the session made there: %w", r.Path, err)
			}
		case l.Entries[0].Type == 'f' && owner == "":
			owner = Owner(l.Entries[0].UID, l.Entries[0].GID)
		}
	}
	n, err := w.WriteFile(ctx, r.Path, bytes.NewReader(content), mode)
	if err != nil {
		return Action{}, fmt.Errorf("undo: restore %s: %w", r.Path, err)
	}
	// WriteFile keeps the mode of the file it replaces, which may have
	// changed since, and may drop setuid/setgid on a new file.
	if err := w.Chmod(ctx, r.Path, mode); err != nil {
		return Action{}, fmt.Errorf("undo: restore %s: mode %04o: %w", r.Path, u, err)
	}
	if owner != "" {
		if err := restoreOwners(ctx, w, r.Path, map[string]string{".": owner}); err != nil {
			return Action{Path: r.Path, Bytes: n}, err
		}
	}
	return Action{Path: r.Path, Bytes: n}, nil
}
