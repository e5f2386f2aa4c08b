package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Undo puts back the files session id changed on the host named target
// (its name in the journal), reached through tr, newest change first. It
// returns the actions taken — only those files were put back when the
// error is not nil; journal.ErrAlreadyRestored when there was nothing left
// to do. With force, files that changed after the session changed them are
// restored too. Files the session changed as another user through become
// are restored as that user, with hb's password and sudo settings (nil:
// sudo without a password).
//
// Undo writes two lines to the default audit log, as the operator's own
// command (agent undo); UndoWith says who asked otherwise.
func Undo(ctx context.Context, tr transport.Transport, stateDir, id, target string, force bool, hb *HostBecome) ([]journal.Action, error) {
	return UndoWith(ctx, tr, stateDir, id, target, UndoOptions{Force: force, Become: hb})
}

// UndoOptions are UndoWith's settings.
type UndoOptions struct {
	// Force restores files that changed after the session changed them.
	Force bool
	// Become is the host's become settings (nil: sudo without a password).
	Become *HostBecome
	// Audit is the log the undo's lines go to; nil opens the default one.
	Audit *audit.Log
	// By and Approval say who approved the undo and how, for its audit
	// lines; empty: the operator, who ran agent undo.
	By, Approval string
}

// UndoWith is Undo with o's settings. Like a step, an undo writes an
// audit line before it changes anything — when that line cannot be
// written nothing is restored (fail closed) — and one after, with what
// was put back, the bytes written and the outcome; the principal is the
// context's (audit.Principal).
func UndoWith(ctx context.Context, tr transport.Transport, stateDir, id, target string, o UndoOptions) ([]journal.Action, error) {
	j, err := journal.Open(stateDir, id, target)
	if err != nil {
		return nil, err
	}
	log := o.Audit
	if log == nil {
		path, err := statedir.AuditPath()
		if err != nil {
			return nil, err
		}
		if log, err = audit.Open(path); err != nil {
			return nil, fmt.Errorf("%w; nothing was restored", err)
		}
		defer log.Close()
	}
	ent := undoEntry(id, target, o)
	if err := log.AppendUnsynced(ctx, ent); err != nil {
		return nil, fmt.Errorf("%w; nothing was restored", err)
	}
	start := time.Now()
	acts, err := j.RestoreWith(ctx, restorer{tr}, journal.RestoreOptions{Force: o.Force, As: becomeRestorer(tr, o.Become)})
	ent.Decision, ent.Duration = audit.Allowed, time.Since(start)
	code := 0
	var lines []string
	var n int64
	for _, a := range acts {
		lines = append(lines, a.String())
		n += a.Bytes
	}
	switch {
	case errors.Is(err, journal.ErrAlreadyRestored):
		lines = append(lines, "already restored; nothing to do")
	case err != nil:
		code, ent.Error = 1, err.Error()
	}
	if len(acts) > 0 {
		ent.BytesChanged = &n
	}
	if len(acts) == 1 {
		ent.Path = acts[0].Path
	}
	ent.As = undoneAs(acts)
	ent.ExitCode, ent.Output = &code, strings.Join(lines, "\n")
	if aerr := log.Append(ctx, ent); aerr != nil {
		// The files are back; the trail misses the outcome: say so.
		return acts, errors.Join(err, fmt.Errorf("undo session %s: %w", id, aerr))
	}
	return acts, err
}

// undoneAs is the become users files were put back as, in the order
// first met, joined by commas ("" when all were the login user's).
func undoneAs(acts []journal.Action) string {
	var as []string
	for _, a := range acts {
		if a.As != "" && !slices.Contains(as, a.As) {
			as = append(as, a.As)
		}
	}
	return strings.Join(as, ",")
}

// UndoTool is the tool name an undo's audit lines carry.
const UndoTool = "undo"

// undoEntry is the audit line of undoing session id on target, before
// it runs.
func undoEntry(id, target string, o UndoOptions) audit.Entry {
	cmd := "agent undo " + id
	if o.Force {
		cmd += " --force"
	}
	by, approval := o.By, o.Approval
	if by == "" {
		by, approval = safety.ByUser, cmp.Or(approval, "the operator ran agent undo")
	}
	return audit.Entry{Session: id, Host: target, Tool: UndoTool, Command: cmd,
		Params:   map[string]any{"session": id, "force": o.Force},
		Risk:     safety.Assessment{Level: safety.Medium, Reasons: []string{"puts back the files session " + id + " changed"}},
		Decision: audit.Started, By: by, Approval: approval}
}

// restorer adapts a transport to journal.FileRestorer.
type restorer struct{ tr transport.Transport }

// WriteFile puts path's content back. A symbolic link a shell command put
// in its place (ln -sf) is removed first: the transports write through
// links, and the file, not the link's target, is what is restored.
func (r restorer) WriteFile(ctx context.Context, path string, rd io.Reader, perm fs.FileMode) (int64, error) {
	q := tools.Quote(path)
	res, err := r.tr.Run(ctx, transport.Command{Command: "if [ -L " + q + " ]; then rm -f -- " + q + "; fi"})
	if err != nil {
		return 0, fmt.Errorf("restore %s: %w", path, err)
	}
	if res.ExitCode != 0 {
		return 0, fmt.Errorf("restore %s: removing the link in its place: %s", path, strings.TrimSpace(res.Stderr))
	}
	return r.tr.WriteFile(ctx, path, rd, perm)
}

// Stat lets undo's checks see a fifo, socket or device without opening it.
func (r restorer) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	return r.tr.Stat(ctx, path)
}

func (r restorer) ReadFile(ctx context.Context, path string, w io.Writer) (int64, error) {
	return r.tr.ReadFile(ctx, path, w)
}

// Chmod sets path's mode, setuid/setgid/sticky included, with `chmod` in
// octal, quoted for the host's shell.
func (r restorer) Chmod(ctx context.Context, path string, mode fs.FileMode) error {
	res, err := r.tr.Run(ctx, transport.Command{Command: fmt.Sprintf("chmod %04o -- %s", journal.UnixMode(mode), tools.Quote(path))})
	if err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("chmod %s: chmod exited %d: %s", path, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return nil
}

// Remove deletes path with `rm -f`, quoted for the host's shell; a file
// already gone is fine.
func (r restorer) Remove(ctx context.Context, path string) error {
	res, err := r.tr.Run(ctx, transport.Command{Command: "rm -f -- " + tools.Quote(path)})
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("remove %s: rm exited %d: %s", path, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return nil
}

// RemoveDir deletes the directory path with `rmdir`, which refuses one
// that is not empty (what was put in it since is not lost); a directory
// already gone is fine.
func (r restorer) RemoveDir(ctx context.Context, path string) error {
	q := tools.Quote(path)
	res, err := r.tr.Run(ctx, transport.Command{Command: "if [ -e " + q + " ] || [ -L " + q + " ]; then rmdir -- " + q + "; fi"})
	if err != nil {
		return fmt.Errorf("remove directory %s: %w", path, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("remove directory %s: rmdir exited %d: %s", path, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return nil
}

var _ journal.OwnerRestorer = restorer{}

// Chown sets the owner and group of path itself (chown -h: a link's own),
// by number.
func (r restorer) Chown(ctx context.Context, path string, uid, gid int) error {
	return r.run(ctx, "change the owner of "+path, fmt.Sprintf("chown -h -- %d:%d %s", uid, gid, tools.Quote(path)))
}

// ListTree lists the directory tree at root as the restorer's user sees it.
func (r restorer) ListTree(ctx context.Context, root string) (journal.TreeListing, error) {
	return executor.ListTree(ctx, r.tr, root)
}

var _ journal.TreeOpener = restorer{}

// OpenTree gives u+rwx to each directory at or under root that lacks it,
// top down: one that blocks the user hides those below it, so find looks
// again after each (at most journal.MaxTreeEntries times). find -P never
// follows a link, and -type d is a directory itself.
func (r restorer) OpenTree(ctx context.Context, root string) error {
	q := tools.Quote(root)
	return r.run(ctx, "make "+root+" traversable", fmt.Sprintf(
		`n=0; while d=$(find -P %s -type d ! -perm -700 -print -quit 2>/dev/null); [ -n "$d" ]; do `+
			`n=$((n+1)); [ $n -le %d ] || exit 1; chmod u+rwx -- "$d" || exit 1; done`,
		q, journal.MaxTreeEntries))
}

// Mkdir creates the directory path with mode (its parent exists).
func (r restorer) Mkdir(ctx context.Context, path string, mode fs.FileMode) error {
	return r.run(ctx, "create directory "+path, fmt.Sprintf("mkdir -m %04o -- %s", journal.UnixMode(mode), tools.Quote(path)))
}

// Symlink creates the symbolic link path pointing to target.
func (r restorer) Symlink(ctx context.Context, target, path string) error {
	return r.run(ctx, "create link "+path, "ln -s -- "+tools.Quote(target)+" "+tools.Quote(path))
}

// RemoveAll deletes path and everything under it (rm -rf); one already
// gone is fine. Restore calls it only on what the session left there.
func (r restorer) RemoveAll(ctx context.Context, path string) error {
	return r.run(ctx, "remove "+path, "rm -rf -- "+tools.Quote(path))
}

// run runs cmd on the host; what says what it does, for errors.
func (r restorer) run(ctx context.Context, what, cmd string) error {
	res, err := r.tr.Run(ctx, transport.Command{Command: cmd})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s: exit %d: %s", what, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return nil
}
