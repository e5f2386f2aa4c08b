package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A directory tree a shell command changes (rm -r, rmdir, mv, chmod -R) is
// journaled whole before the command runs: one record whose blob is a
// manifest (every entry's relative path, type, mode, link target, and for
// a regular file the blob holding its content), so that undo can put the
// tree back — files byte for byte, modes, directories, symbolic links as
// links. Its state is a digest of the manifest without blob numbers
// ("tree:" + hex SHA-256, see TreeState), compared like a file's content
// to refuse overwriting newer work.

// TreeStatePrefix starts the state of a directory (see TreeState).
const TreeStatePrefix = "tree:"

// MaxTreeEntries bounds the entries (directories, files and links) the
// journal saves for one command's trees; a tree with more is not
// journaled and the command stays high.
const MaxTreeEntries = 4096

// TreeEntry is one entry of a directory tree as a host lists it.
type TreeEntry struct {
	// Path is relative to the tree's root, slash separated and clean;
	// "." is the root.
	Path string
	// Type is 'd' (directory), 'f' (regular file), 'l' (symbolic link),
	// or what find's %y says of anything else ('b', 'c', 'p', 's', …).
	Type byte
	Mode uint32 // permission, setuid, setgid and sticky bits
	UID  int
	GID  int
	// Nlink is the entry's hard-link count.
	Nlink int
	Dev   uint64 // the device (file system) it is on
	Size  int64
	Link  string // a link's target
	// SHA256 is a regular file's content, hex; set when the tree's state
	// is computed (TreeState) or it was journaled.
	SHA256 string
}

// TreeListing is a tree as the host's user sees it: its entries (the root
// first) and, to tell whether undo can put it back as it was, the user's
// uid and gid and the device of the root's parent directory.
type TreeListing struct {
	UID, GID  int
	ParentDev uint64
	Entries   []TreeEntry
}

// treeFields is the number of NUL-terminated fields of one listed entry.
const treeFields = 9

// TreeListCommand is the shell command that lists the tree at root (an
// absolute, clean path) for ParseTreeListing, at most max+1 entries: the
// user's uid and gid, the device of root's parent, then each entry's type,
// mode, owner, group, link count, device, size, path and link target, NUL
// terminated; "absent" when nothing is at root. GNU find and head; where
// find has no -printf (BusyBox) the same fields from stat -c and readlink,
// one entry a line of find's output (a name with a newline in the tree
// fails the listing).
func TreeListCommand(root string, max int) string {
	q := shellQuote(root)
	return fmt.Sprintf(`if [ ! -e %[1]s ] && [ ! -L %[1]s ]; then echo absent; exit 0; fi; `+
		`if find -P / -maxdepth 0 -printf '' 2>/dev/null; then `+
		`id -u && id -g && find -P %[2]s -maxdepth 0 -printf '%%D\n' && `+
		`find -P %[1]s -printf '%%y\0%%m\0%%U\0%%G\0%%n\0%%D\0%%s\0%%P\0%%l\0' | head -z -n %[3]d; `+
		`else `+treeListPOSIX+`; fi`,
		q, shellQuote(path.Dir(root)), treeFields*(max+1), max+1)
}

// treeListPOSIX is TreeListCommand's listing without GNU find (%%[1]s the
// root, %%[2]s its parent, %%[4]d the entries to list).
const treeListPOSIX = `id -u && id -g && stat -c %%d -- %[2]s && ` +
	`if [ -n "$(find -P %[1]s -name '*
*' | head -n 1)" ]; then echo 'a file name with a newline in the tree' >&2; exit 1; fi && ` +
	`find -P %[1]s | head -n %[4]d | while IFS= read -r p; do ` +
	`set -- $(stat -c '%%f %%a %%u %%g %%h %%d %%s' -- "$p") && [ $# = 7 ] || exit 1; ` +
	`case $((0x$1 & 61440)) in 16384) y=d ;; 32768) y=f ;; 40960) y=l ;; 8192) y=c ;; 24576) y=b ;; 4096) y=p ;; 49152) y=s ;; *) y=U ;; esac; ` +
	`r=${p#%[1]s}; r=${r#/}; l=; [ $y != l ] || l=$(readlink -- "$p"); ` +
	`printf '%%s\0%%s\0%%s\0%%s\0%%s\0%%s\0%%s\0%%s\0%%s\0' $y $2 $3 $4 $5 $6 $7 "$r" "$l"; done`

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ErrTreeAbsent is ParseTreeListing's answer when nothing is at the root.
var ErrTreeAbsent = fmt.Errorf("no file at the tree's root: %w", fs.ErrNotExist)

// ParseTreeListing parses TreeListCommand's output. Nothing at the root
// returns an error wrapping ErrTreeAbsent (and fs.ErrNotExist).
func ParseTreeListing(out []byte) (TreeListing, error) {
	var l TreeListing
	if string(out) == "absent\n" {
		return l, ErrTreeAbsent
	}
	head := make([]string, 3)
	for i := range head {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			return l, fmt.Errorf("tree listing: header line %d missing", i+1)
		}
		head[i], out = string(out[:nl]), out[nl+1:]
	}
	var err error
	if l.UID, err = nonNegative(head[0]); err != nil {
		return l, fmt.Errorf("tree listing: uid: %w", err)
	}
	if l.GID, err = nonNegative(head[1]); err != nil {
		return l, fmt.Errorf("tree listing: gid: %w", err)
	}
	if l.ParentDev, err = strconv.ParseUint(head[2], 10, 64); err != nil {
		return l, fmt.Errorf("tree listing: device: %w", err)
	}
	if len(out) == 0 || out[len(out)-1] != 0 {
		return l, errors.New("tree listing: entries do not end with NUL")
	}
	fields := strings.Split(string(out[:len(out)-1]), "\x00")
	if len(fields)%treeFields != 0 {
		return l, fmt.Errorf("tree listing: %d fields, not whole entries", len(fields))
	}
	for i := 0; i < len(fields); i += treeFields {
		e, err := parseTreeEntry(fields[i : i+treeFields])
		if err != nil {
			return l, fmt.Errorf("tree listing: entry %d: %w", i/treeFields+1, err)
		}
		if (i == 0) != (e.Path == ".") {
			return l, fmt.Errorf("tree listing: entry %d: %q where the root should be first", i/treeFields+1, e.Path)
		}
		l.Entries = append(l.Entries, e)
	}
	// find lists in directory order: sorted, a directory comes before
	// what is in it (a path sorts before its extensions).
	slices.SortFunc(l.Entries[1:], func(a, b TreeEntry) int { return strings.Compare(a.Path, b.Path) })
	return l, nil
}

func parseTreeEntry(f []string) (TreeEntry, error) {
	var e TreeEntry
	if len(f[0]) != 1 {
		return e, fmt.Errorf("bad type %q", f[0])
	}
	e.Type = f[0][0]
	m, err := strconv.ParseUint(f[1], 8, 32)
	if err != nil || m > 0o7777 {
		return e, fmt.Errorf("bad mode %q", f[1])
	}
	e.Mode = uint32(m)
	if e.UID, err = nonNegative(f[2]); err != nil {
		return e, fmt.Errorf("uid: %w", err)
	}
	if e.GID, err = nonNegative(f[3]); err != nil {
		return e, fmt.Errorf("gid: %w", err)
	}
	if e.Nlink, err = nonNegative(f[4]); err != nil {
		return e, fmt.Errorf("link count: %w", err)
	}
	if e.Dev, err = strconv.ParseUint(f[5], 10, 64); err != nil {
		return e, fmt.Errorf("device: %w", err)
	}
	size, err := nonNegative(f[6])
	if err != nil {
		return e, fmt.Errorf("size: %w", err)
	}
	e.Size = int64(size)
	e.Path = f[7]
	if e.Path == "" {
		e.Path = "."
	}
	if err := checkRelPath(e.Path); err != nil {
		return e, err
	}
	e.Link = f[8]
	if (e.Type == 'l') != (e.Link != "") {
		return e, fmt.Errorf("%s: link target %q for type %c", e.Path, e.Link, e.Type)
	}
	return e, nil
}

func nonNegative(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return n, nil
}

// checkRelPath accepts "." and clean relative paths that stay inside the
// tree: what a manifest or listing may name.
func checkRelPath(p string) error {
	if p == "." {
		return nil
	}
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("path %q is not relative, clean and inside the tree", p)
	}
	return nil
}

// manifestEntry is one entry of a journaled tree's manifest.
type manifestEntry struct {
	Path   string `json:"path"`
	Type   string `json:"type"`           // "dir", "file" or "symlink"
	Mode   string `json:"mode,omitempty"` // octal, & 07777; not for a link
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"` // a file's content
	Link   string `json:"link,omitempty"`
	N      int    `json:"n,omitempty"` // the blob holding a file's content
	// Owner is the entry's owner and group, "UID:GID" (see Owner): undo
	// puts back an owner that differs, a link's own included.
	Owner string `json:"owner,omitempty"`
}

var typeNames = map[byte]string{'d': "dir", 'f': "file", 'l': "symlink"}

// manifestOf is the manifest of entries (types d, f, l; files' SHA256
// set), with blob numbers from blobs (nil: none, for the digest).
func manifestOf(entries []TreeEntry, blobs map[string]int) []manifestEntry {
	out := make([]manifestEntry, 0, len(entries))
	for _, e := range entries {
		m := manifestEntry{Path: e.Path, Type: typeNames[e.Type], Owner: Owner(e.UID, e.GID)}
		switch e.Type {
		case 'd':
			m.Mode = fmt.Sprintf("%04o", e.Mode)
		case 'f':
			m.Mode, m.Size, m.SHA256, m.N = fmt.Sprintf("%04o", e.Mode), e.Size, e.SHA256, blobs[e.Path]
		case 'l':
			m.Link = e.Link
		}
		out = append(out, m)
	}
	return out
}

// digest is the state of a tree: the SHA-256 of its manifest without blob
// numbers, hex.
func digest(m []manifestEntry) string {
	plain := make([]manifestEntry, len(m))
	for i, e := range m {
		e.N = 0
		plain[i] = e
	}
	b, _ := json.Marshal(plain) // strings and numbers only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TreeState is the state of the tree entries lists (files' SHA256 set):
// "tree:" and the hex SHA-256 of its manifest. Changed takes it for a
// path that is a directory after the session's change.
func TreeState(entries []TreeEntry) string {
	return TreeStatePrefix + digest(manifestOf(entries, nil))
}

// parseManifest parses and checks a journaled tree's manifest: the root
// first, paths clean, relative, unique and sorted (a directory before
// what is in it), every entry's parent a directory of the manifest, and
// the fields each type needs.
func parseManifest(b []byte) ([]manifestEntry, error) {
	var m []manifestEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("tree manifest: %w", err)
	}
	if dec.More() {
		return nil, errors.New("tree manifest: trailing data")
	}
	if len(m) == 0 || m[0].Path != "." || m[0].Type != "dir" {
		return nil, errors.New("tree manifest: the root directory is not first")
	}
	dirs := map[string]bool{}
	for i, e := range m {
		if err := checkRelPath(e.Path); err != nil {
			return nil, fmt.Errorf("tree manifest: %w", err)
		}
		if i > 0 && (e.Path == "." || e.Path <= m[i-1].Path) {
			return nil, fmt.Errorf("tree manifest: %q out of order or repeated", e.Path)
		}
		if i > 0 && !dirs[path.Dir(e.Path)] {
			return nil, fmt.Errorf("tree manifest: %q is not in a directory of the tree", e.Path)
		}
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("tree manifest: %s: %w", e.Path, err)
		}
		if e.Type == "dir" {
			dirs[e.Path] = true
		}
	}
	return m, nil
}

func (e manifestEntry) check() error {
	if _, _, err := ParseOwner(e.Owner); e.Owner != "" && err != nil {
		return err
	}
	mode := func() error {
		if m, err := strconv.ParseUint(e.Mode, 8, 32); err != nil || m > 0o7777 {
			return fmt.Errorf("bad mode %q", e.Mode)
		}
		return nil
	}
	switch e.Type {
	case "dir":
		if e.Size != 0 || e.SHA256 != "" || e.Link != "" || e.N != 0 {
			return errors.New("a directory with file or link fields")
		}
		return mode()
	case "file":
		if e.Link != "" || e.N <= 0 || e.Size < 0 {
			return errors.New("a file without its blob, or with a link target")
		}
		if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("bad sha256 %q", e.SHA256)
		}
		return mode()
	case "symlink":
		if e.Link == "" || strings.ContainsRune(e.Link, 0) || e.Mode != "" || e.Size != 0 || e.SHA256 != "" || e.N != 0 {
			return errors.New("a link without its target, or with file fields")
		}
		return nil
	}
	return fmt.Errorf("unknown type %q", e.Type)
}

// RecordTree stores the tree at root (an existing directory, entries as
// listed, of types d, f and l only) before a change, made as user as (""
// for the login user): each file's content is read with read into its own
// blob, then the manifest, then the index record, so the record is on
// disk before the caller makes the change. Each file is bounded by
// MaxBytes (ErrTooLarge); the caller bounds the whole. Only a path's
// first record counts. The entries' SHA256 are set.
func (j *Journal) RecordTree(ctx context.Context, root string, entries []TreeEntry, read func(ctx context.Context, p string, w io.Writer) error, as string) error {
	if err := checkJournalPath(root); err != nil {
		return fmt.Errorf("undo journal: record: %w", err)
	}
	if len(entries) == 0 || entries[0].Path != "." || entries[0].Type != 'd' {
		return fmt.Errorf("undo journal: record %s: not a directory tree", root)
	}
	limit := j.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restored {
		return fmt.Errorf("undo journal: session %s on %s was already restored; start a new session", j.session, j.host)
	}
	if j.seen[root] {
		return nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("undo journal: %w", err)
	}
	blobs := map[string]int{}
	var total int64
	for i := range entries {
		e := &entries[i]
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("undo journal: record %s: %w", root, err)
		}
		if _, ok := typeNames[e.Type]; !ok || checkRelPath(e.Path) != nil {
			return fmt.Errorf("undo journal: record %s: %q cannot be saved (type %c)", root, e.Path, e.Type)
		}
		if e.Type != 'f' {
			continue
		}
		p := path.Join(root, e.Path)
		n, size, sum, err := j.writeBlobFrom(func(w io.Writer) error {
			return read(ctx, p, &capWriter{w: w, n: limit, path: p})
		})
		if err != nil {
			return fmt.Errorf("undo journal: save %s: %w", p, err)
		}
		blobs[e.Path], e.Size, e.SHA256 = n, size, sum
		total += size
	}
	// One syncfs for all the files' blobs instead of an fsync each (a
	// tree of small files paid ~8 ms a file under load); the manifest's
	// blob and the index line are synced on their own after it.
	if err := syncFS(j.dir); err != nil {
		return fmt.Errorf("undo journal: save %s: %w", root, err)
	}
	m := manifestOf(entries, blobs)
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("undo journal: record %s: %w", root, err)
	}
	n, err := j.writeBlob(b)
	if err != nil {
		return fmt.Errorf("undo journal: save the manifest of %s: %w", root, err)
	}
	rec := indexRecord{Host: j.host, Path: root, Existed: true, Tree: true, N: n, Size: total,
		SHA256: digest(m), Time: time.Now().UTC(), As: as}
	if err := j.appendIndex(rec); err != nil {
		return fmt.Errorf("undo journal: record %s: %w", root, err)
	}
	j.seen[root] = true
	return nil
}

// capWriter fails once more than n bytes are written to it.
type capWriter struct {
	w    io.Writer
	n    int64
	path string
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.n {
		return 0, fmt.Errorf("%s is above the journal's %d-byte cap: %w", c.path, c.n, ErrTooLarge)
	}
	c.n -= int64(len(p))
	return c.w.Write(p)
}

// writeBlobFrom is writeBlob for content fill streams into the blob; it
// returns the blob's number, size and SHA-256 (hex). Neither the blob nor
// the directory is synced: RecordTree syncs the file system once for all
// (syncFS), and its last blob, the manifest, syncs the directory.
func (j *Journal) writeBlobFrom(fill func(io.Writer) error) (int, int64, string, error) {
	for {
		n := j.next
		name := filepath.Join(j.dir, strconv.Itoa(n)+".bin")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			j.next++
			continue
		}
		if err != nil {
			return 0, 0, "", err
		}
		j.next++
		h := sha256.New()
		cw := &countWriter{w: io.MultiWriter(f, h)}
		err = fill(cw)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return 0, 0, "", err
		}
		return n, cw.n, hex.EncodeToString(h.Sum(nil)), nil
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
