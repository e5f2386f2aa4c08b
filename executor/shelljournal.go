package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// A shell command's file changes are journaled like the file tools': the
// files the classifier says it writes (redirections, the operands and
// option values of the writers and removers it knows) are saved before it
// runs, so that `agent undo` restores them, and a change undo could not
// take back makes the command High (medium means reversible).

// savedFile is what the undo journal saves of a file a command writes,
// before it runs: the file (its Path absolute, every symbolic link above
// it followed; Dir: a directory the command creates, which undo removes
// while empty) and its state, which undo restores.
type savedFile struct {
	safety.Touch
	existed bool
	mode    fs.FileMode
	size    int64
	// owner is an existing file's "UID:GID" where the transport's Stat
	// says it (locally, SFTP), or looked up when the command changes
	// owners (chown, chgrp): undo puts it back.
	owner string
	// tree is the listing of an existing directory the command changes
	// (rm -r, rmdir, mv, chmod -R): its whole tree is journaled; size is
	// its files' bytes.
	tree []journal.TreeEntry
	// content is an existing file's content when it was read ahead with
	// the look at it (prefetched): the journal saves it without reading
	// the file again, unless time passed since (a person was asked).
	content    []byte
	prefetched bool
}

// undoGap says why undo could not take a command's change back.
type undoGap struct{ why string }

func gapf(format string, a ...any) *undoGap { return &undoGap{fmt.Sprintf(format, a...)} }

// maxShellJournal bounds what one command's targets may hold in all.
const maxShellJournal = journal.MaxCommandBytes

// planShellUndo resolves on the host (through v, as the user the command
// runs as) the files a command writes and tells whether undo can take each
// back: it returns those it can, and why not for the first it cannot (nil
// when it can take back all). The error is only a done ctx or a home
// directory that cannot be found.
//
// With owners (the command runs chown or chgrp), each existing file's
// owner and group are looked at too, for the journal to keep.
func (e *Executor) planShellUndo(ctx context.Context, v *hostView, touches []safety.Touch, cwd string, owners bool) ([]savedFile, *undoGap, error) {
	var out []savedFile
	var total int64
	entries := 0
	limit := e.journalMax()
	seen := map[string]bool{} // path → whether it is a directory the command creates
	for _, t := range touches {
		if !t.Writes() || notAFile(t.Path) {
			continue
		}
		if strings.ContainsAny(t.Path, "*?[") {
			return out, gapf("%s names files by a pattern, unknown until the command runs", t.Path), nil
		}
		abs, err := v.abs(t.Path, cwd)
		if err != nil {
			return out, nil, err
		}
		if dir, ok := seen[abs]; ok {
			if dir && !t.Dir { // cp f d, where the same command makes d
				return out, gapf("%s is a directory the command creates: undo does not know what goes into it", abs), nil
			}
			continue
		}
		seen[abs] = t.Dir
		if t.Dir {
			dirs, gap, err := e.createdDirs(ctx, v, abs, t.Parents)
			if err != nil || gap != nil {
				return out, gap, err
			}
			for _, d := range dirs {
				seen[d.Path] = true
			}
			out = append(out, dirs...)
			continue
		}
		st, gap, err := e.savedFileAt(ctx, v, abs)
		if err != nil || gap != nil {
			return out, gap, err
		}
		// A transport whose look does not say owners (a become step's
		// without Inspect): looked up (a round trip a file), so that undo
		// through sudo gives a file it puts back its owner, not root.
		if (owners || v.tr != e.cfg.Transport) && st.existed && st.tree == nil && st.owner == "" {
			l, err := ListTree(ctx, v.tr, st.Path)
			if err != nil || l.Entries[0].Type != 'f' {
				if cerr := ctx.Err(); cerr != nil {
					return out, nil, cerr
				}
				return out, gapf("%s: its owner cannot be looked at to save it (%v)", st.Path, err), nil
			}
			st.owner = journal.Owner(l.Entries[0].UID, l.Entries[0].GID)
		}
		if entries += len(st.tree); entries > journal.MaxTreeEntries {
			return out, gapf("the directories it changes hold more than %d entries, more than the undo journal keeps", journal.MaxTreeEntries), nil
		}
		if total += st.size; st.tree == nil && st.size > limit || total > maxShellJournal {
			return out, gapf("%s holds %d bytes, more than the undo journal keeps (%d a file, %d a command)",
				st.Path, st.size, limit, maxShellJournal), nil
		}
		out = append(out, st)
	}
	return out, nil, nil
}

// notAFile reports the pseudo-files a redirection may name that are no
// file to save.
func notAFile(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/")
}

// savedFileAt looks at abs on the host through v (as the user the
// command runs as: a become step's files are looked at, saved and
// restored through sudo): where it really is, and whether undo can
// restore it (a regular file, or no file yet); a small file's content is
// read with the look. The gap says why undo cannot.
func (e *Executor) savedFileAt(ctx context.Context, v *hostView, abs string) (savedFile, *undoGap, error) {
	hp, err := v.look(ctx, abs, true)
	if err != nil {
		return savedFile{}, nil, err
	}
	real := hp.real
	if real == "" {
		real = abs
	}
	if real != abs {
		dir, err := v.real(ctx, path.Dir(abs))
		if err != nil {
			return savedFile{}, nil, err
		}
		if path.Join(dir, path.Base(abs)) != real {
			return savedFile{}, gapf("%s is a symbolic link: undo does not restore links", abs), nil
		}
	}
	fi := hp.in.Info
	if !hp.looked && !hp.missing() { // a missing name needs no Stat to say so
		if fi, err = v.tr.Stat(ctx, real); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if cerr := ctx.Err(); cerr != nil {
				return savedFile{}, nil, cerr
			}
			return savedFile{}, gapf("%s cannot be looked at to save it (%v)", real, err), nil
		}
	}
	switch {
	case fi == nil:
		return savedFile{Touch: safety.Touch{Path: real, Op: safety.FileWrite}}, nil, nil
	case fi.IsDir():
		return e.treeTarget(ctx, v.tr, real)
	case !fi.Mode().IsRegular():
		return savedFile{}, gapf("%s is not a regular file", real), nil
	}
	n, ok := infoLinks(fi)
	if hp.looked && hp.in.Links > 0 {
		// The look said it (a served SSH worker's, a become host's
		// stat): SFTP's attributes have no link count.
		n, ok = uint64(hp.in.Links), true
	}
	if ok && n > 1 {
		// Undo writes a copy under this name; the other names keep the
		// change (and one may be a protected file: hardlinkfloor.go).
		return savedFile{}, gapf("%s has %d hard links: undo would put back a copy, and the other names keep the change", real, n), nil
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	st := savedFile{Touch: safety.Touch{Path: real, Op: safety.FileWrite}, existed: true, mode: mode, size: fi.Size()}
	switch {
	case hp.in.Owned: // free where the look says it: undo puts it back
		st.owner = journal.Owner(hp.in.UID, hp.in.GID)
	default:
		if uid, gid, ok := infoOwner(fi); ok {
			st.owner = journal.Owner(uid, gid)
		}
	}
	if hp.in.Read && int64(len(hp.in.Content)) == fi.Size() {
		st.content, st.prefetched = hp.in.Content, true
	}
	return st, nil, nil
}

// createdDirs lists the directories mkdir abs would create on the host,
// outermost first: abs when it does not exist yet and, with parents (-p),
// each missing directory above it. An existing abs creates nothing (mkdir
// -p leaves it; plain mkdir fails).
func (e *Executor) createdDirs(ctx context.Context, v *hostView, abs string, parents bool) ([]savedFile, *undoGap, error) {
	real, err := v.real(ctx, abs)
	if err != nil {
		return nil, nil, err
	}
	var out []savedFile
	for p := real; ; p = path.Dir(p) {
		// As the view saw it (the classifier's and the other targets'
		// look), else asked.
		var err error
		if fi, ok := v.statOf(p); !ok {
			_, err = v.tr.Stat(ctx, p)
		} else if fi == nil {
			err = fs.ErrNotExist
		}
		switch {
		case err == nil:
			return out, nil, nil
		case !errors.Is(err, fs.ErrNotExist):
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			return nil, gapf("%s cannot be looked at to save it (%v)", p, err), nil
		}
		out = append([]savedFile{{Touch: safety.Touch{Path: p, Op: safety.FileWrite, Dir: true}}}, out...)
		if !parents || p == "/" || v.dirKnown(p) {
			return out, nil, nil
		}
	}
}

func (e *Executor) journalMax() int64 {
	if e.cfg.Journal != nil && e.cfg.Journal.MaxBytes > 0 {
		return e.cfg.Journal.MaxBytes
	}
	return journal.DefaultMaxBytes
}

// journalShell saves each target's content and mode (or its absence)
// before the command runs, read as the user tr acts as (as: the become
// user, recorded so that undo restores them as that user); an error
// refuses the command.
//
// before, when not nil, gets each target's state as saved (beforeRun),
// for telling what a command that failed part way changed.
func (e *Executor) journalShell(ctx context.Context, tr transport.Transport, as string, targets []savedFile, before map[string]beforeRun) error {
	for _, t := range targets {
		if t.Dir {
			if err := e.cfg.Journal.RecordDir(ctx, t.Path, as); err != nil {
				return &journalError{err}
			}
			if before != nil {
				before[t.Path] = beforeRun{sum: journal.Absent}
			}
			continue
		}
		if t.tree != nil {
			l, err := e.journalTree(ctx, tr, as, t)
			if err != nil {
				return &journalError{err}
			}
			if before != nil {
				before[t.Path] = beforeRun{tree: treeNames(l)}
			}
			continue
		}
		content := t.content
		if t.existed && !t.prefetched {
			var b strings.Builder
			if _, err := tr.ReadFile(ctx, t.Path, &limitedWriter{w: &b, n: e.journalMax()}); err != nil {
				return &journalError{fmt.Errorf("undo journal: save %s: %w", t.Path, err)}
			}
			content = []byte(b.String())
		}
		if err := e.cfg.Journal.RecordOwned(ctx, t.Path, content, t.existed, t.mode, t.owner, as); err != nil {
			return &journalError{err}
		}
		if before != nil {
			before[t.Path] = beforeRun{sum: contentState(content, t.existed)}
		}
	}
	return nil
}

// shellChanged records what the command left in each target (its content's
// SHA-256, or journal.Absent), so that undo refuses to overwrite a later
// change. It runs whether the command succeeded or not: a failed command
// may have changed files too.
//
// read holds the states the host read right after the command, in its
// round trip (afterStates), by path; the others are read here.
func (e *Executor) shellChanged(ctx context.Context, tr transport.Transport, targets []savedFile, read map[string]transport.FileState) (after map[string]string, sizes map[string]int64, err error) {
	after, sizes = map[string]string{}, map[string]int64{}
	var errs []error
	var notes []string // over the bounds: undo cannot tell later changes from the session's
	for _, t := range targets {
		if t.Dir {
			continue // undo's rmdir refuses a directory something was put in
		}
		var sum string
		if st, ok := read[t.Path]; ok {
			sum, sizes[t.Path] = st.Value, st.Size
		} else {
			// A directory now: its tree's state; bounded like the journal.
			c := &countingTree{hostTree: hostTree{tr}, path: t.Path}
			if sum, err = journal.State(ctx, c, t.Path, e.cfg.Journal.Bounds()); err != nil {
				errs = append(errs, fmt.Errorf("undo journal: %s: %w", t.Path, err))
				if ctx.Err() != nil {
					continue
				}
				// Left unreadable (chmod 000): undo restores it while it
				// stays so, even after an earlier change of the session
				// recorded what that one left.
				sum = journal.Unreadable
			}
			sizes[t.Path] = c.n
		}
		after[t.Path] = sum
		if err := e.cfg.Journal.Changed(ctx, t.Path, sum); err != nil {
			errs = append(errs, err)
		}
		if sum == journal.TooLarge {
			notes = append(notes, t.Path)
		}
	}
	if len(notes) > 0 {
		errs = append(errs, fmt.Errorf("undo journal: %s now holds more than undo compares (%s): agent undo refuses it without --force",
			strings.Join(notes, ", "), e.cfg.Journal.Bounds()))
	}
	return after, sizes, errors.Join(errs...)
}

// countingTree is hostTree counting the bytes read of path itself (a
// file's new size, as State reads it to hash it).
type countingTree struct {
	hostTree
	path string
	n    int64
}

func (c *countingTree) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	n, err := c.hostTree.ReadFile(ctx, p, w)
	if p == c.path {
		c.n = n
	}
	return n, err
}

// limitedWriter fails once more than n bytes are written: a file that grew
// past the journal's cap since it was planned.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("more than the undo journal keeps: %w", journal.ErrTooLarge)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

// targetPaths lists the targets' paths.
func targetPaths(ts []savedFile) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Path
	}
	return out
}

// afterStates asks the transport to read the states of the command's
// file targets right after it, in its round trip
// (transport.AfterStates): only on the host's own transport (a become
// step's are read through sudo, as the become user).
func (e *Executor) afterStates(p *prepared) *transport.AfterStates {
	if len(p.cls.undo) == 0 || p.tr != e.cfg.Transport || e.cfg.Journal == nil {
		return nil
	}
	a := &transport.AfterStates{FileBytes: e.cfg.Journal.Bounds().FileBytes}
	for _, t := range p.cls.undo {
		if !t.Dir {
			a.Paths = append(a.Paths, t.Path)
		}
	}
	if len(a.Paths) == 0 {
		return nil
	}
	return a
}

// hostStates are the states a read after the command, by path: those
// journal.State would say (journal.HostState), the others left out.
func hostStates(a *transport.AfterStates) map[string]transport.FileState {
	if a == nil {
		return nil
	}
	states := a.Take()
	if states == nil {
		return nil
	}
	out := map[string]transport.FileState{}
	for i, st := range states {
		if journal.HostState(st.Value) {
			out[a.Paths[i]] = st
		}
	}
	return out
}
