package engine

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/journal"
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
func Undo(ctx context.Context, tr transport.Transport, stateDir, id, target string, force bool, hb *HostBecome) ([]journal.Action, error) {
	j, err := journal.Open(stateDir, id, target)
	if err != nil {
		return nil, err
	}
	return j.RestoreWith(ctx, restorer{tr}, journal.RestoreOptions{Force: force, As: becomeRestorer(tr, hb)})
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
