package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"unicode/utf8"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// maxListing bounds the bytes a tree's listing may print: MaxTreeEntries
// entries with long paths.
const maxListing = 16 << 20

// ListTree lists the directory tree at root on the host reached through tr
// (as the user tr acts as): journal.TreeListCommand, parsed. Nothing at
// root is an error wrapping fs.ErrNotExist; at most
// journal.MaxTreeEntries+1 entries are listed.
func ListTree(ctx context.Context, tr transport.Transport, root string) (journal.TreeListing, error) {
	var out bytes.Buffer
	res, err := tr.Run(ctx, transport.Command{Command: journal.TreeListCommand(root, journal.MaxTreeEntries),
		Stdout: &capped{w: &out, n: maxListing}, CaptureLimit: 4096})
	switch {
	case err != nil:
		return journal.TreeListing{}, fmt.Errorf("list %s: %w", root, err)
	case out.Len() >= maxListing:
		return journal.TreeListing{}, fmt.Errorf("list %s: the listing is above %d bytes", root, maxListing)
	case res.ExitCode != 0 || res.Stderr != "":
		return journal.TreeListing{}, fmt.Errorf("list %s: exit %d: %s", root, res.ExitCode, firstLine(res.Stderr))
	}
	l, err := journal.ParseTreeListing(out.Bytes())
	if err != nil {
		return l, fmt.Errorf("list %s: %w", root, err)
	}
	return l, nil
}

// capped keeps the first n bytes written to it and drops the rest.
type capped struct {
	w io.Writer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if k := min(len(p), c.n); k > 0 {
		c.w.Write(p[:k])
		c.n -= k
	}
	return len(p), nil
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// treeTarget looks at the directory real on the host: undo can take a
// change to it back when its whole tree can be journaled. why says why
// not: more entries than journal.MaxTreeEntries, a file above the journal's
// per-file cap, anything but directories, regular files and symbolic
// links (devices, sockets, fifos), a file with other hard links (undo
// would put back a copy), a mount point at or inside it, or an entry the
// user does not own or whose group is not the user's (undo would create
// it as the user).
func (e *Executor) treeTarget(ctx context.Context, tr transport.Transport, real string) (savedFile, *undoGap, error) {
	l, err := ListTree(ctx, tr, real)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return savedFile{}, nil, cerr
		}
		return savedFile{}, gapf("%s is a directory whose tree cannot be listed to save it (%v)", real, err), nil
	}
	if why := treeWhy(real, l, e.journalMax()); why != "" {
		return savedFile{}, &undoGap{why}, nil
	}
	var size int64
	for _, en := range l.Entries {
		size += en.Size * int64(boolInt(en.Type == 'f'))
	}
	return savedFile{Touch: safety.Touch{Path: real, Op: safety.FileWrite}, existed: true, size: size, tree: l.Entries}, nil, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// treeWhy says why undo could not put the tree l at root back as it is,
// or "" when it can; limit is the journal's per-file cap.
func treeWhy(root string, l journal.TreeListing, limit int64) string {
	if len(l.Entries) == 0 || l.Entries[0].Type != 'd' {
		return fmt.Sprintf("%s is no longer a directory", root)
	}
	if len(l.Entries) > journal.MaxTreeEntries {
		return fmt.Sprintf("%s holds more than %d entries, more than the undo journal keeps", root, journal.MaxTreeEntries)
	}
	rootDev := l.Entries[0].Dev
	if rootDev != l.ParentDev {
		return fmt.Sprintf("%s is a mount point: undo cannot restore a file system", root)
	}
	for _, en := range l.Entries {
		p := path.Join(root, en.Path)
		switch {
		case !utf8.ValidString(en.Path):
			return fmt.Sprintf("%s holds a name that is not UTF-8 (%s): the journal's manifest cannot keep it", root, escapeInvalidUTF8(p))
		case en.Type != 'd' && en.Type != 'f' && en.Type != 'l':
			return fmt.Sprintf("%s is a %s: undo restores only directories, regular files and symbolic links", p, kindName(en.Type))
		case en.Dev != rootDev:
			return fmt.Sprintf("%s is on another file system (a mount point inside %s): undo cannot restore it", p, root)
		case en.Type == 'f' && en.Nlink > 1:
			return fmt.Sprintf("%s has %d hard links: undo would put back a copy, not the same file", p, en.Nlink)
		case en.Type == 'f' && en.Size > limit:
			return fmt.Sprintf("%s holds %d bytes, more than the undo journal keeps (%d a file)", p, en.Size, limit)
		case l.UID != 0 && (en.UID != l.UID || en.GID != l.GID): // root can put any owner back
			return fmt.Sprintf("%s belongs to uid %d gid %d, not to the user the command runs as (uid %d gid %d): undo would not restore its owner",
				p, en.UID, en.GID, l.UID, l.GID)
		}
	}
	return ""
}

func kindName(t byte) string {
	switch t {
	case 'b':
		return "block device"
	case 'c':
		return "character device"
	case 'p':
		return "fifo"
	case 's':
		return "socket"
	case 'D':
		return "door"
	}
	return fmt.Sprintf("file of type %q", t)
}

// journalTree saves the tree at t.Path, listed again (what is there when
// the command is about to run, not when it was approved) and checked
// again; an error refuses the command.
func (e *Executor) journalTree(ctx context.Context, tr transport.Transport, as string, t savedFile) (journal.TreeListing, error) {
	l, err := ListTree(ctx, tr, t.Path)
	if err != nil {
		return l, fmt.Errorf("undo journal: save %s: %w", t.Path, err)
	}
	if why := treeWhy(t.Path, l, e.journalMax()); why != "" {
		return l, fmt.Errorf("undo journal: save %s: %s", t.Path, why)
	}
	var total int64
	read := func(ctx context.Context, p string, w io.Writer) error {
		n, err := tr.ReadFile(ctx, p, &limitedWriter{w: w, n: maxShellJournal - total})
		total += n
		return err
	}
	return l, e.cfg.Journal.RecordTree(ctx, t.Path, l.Entries, read, as)
}

// hostTree reads and lists files through a transport: a journal.TreeReader.
type hostTree struct{ tr transport.Transport }

func (h hostTree) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	return h.tr.ReadFile(ctx, p, w)
}

// Stat lets the journal see a fifo, socket or device without opening it.
// A become transport's Stat would be one more sudo per target; its read
// refuses such files itself (transport/become's readScript), so it is
// not asked.
func (h hostTree) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	if _, ok := transport.As[transport.Becomer](h.tr); ok {
		return nil, errNoStat
	}
	return h.tr.Stat(ctx, p)
}

var errNoStat = errors.New("not asked")

// StatLarge is Stat for a file over the journal's bound
// (journal.LargeStater), through become too: its size and time make the
// state undo compares (one sudo, only for such a file).
func (h hostTree) StatLarge(ctx context.Context, p string) (fs.FileInfo, error) {
	return h.tr.Stat(ctx, p)
}

func (h hostTree) ListTree(ctx context.Context, root string) (journal.TreeListing, error) {
	return ListTree(ctx, h.tr, root)
}

var _ journal.TreeReader = hostTree{}
