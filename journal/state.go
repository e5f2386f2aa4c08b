package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// TooLarge is the state of a path that holds more than State hashes (see
// StateBounds): a file over the journal's per-file cap, or a directory
// tree over its entries or bytes. Undo cannot tell whether such a path
// changed since the session, and refuses it without --force.
const TooLarge = "too-large"

// LargeStatePrefix starts the state of a regular file over the per-file
// bound whose reader can Stat it: "large:SIZE:MTIME:SHA" — its size, its
// modification time (Unix nanoseconds, as the reader reports it) and the
// SHA-256 of its first FileBytes bytes. A command that appends past the
// bound (`yes | head -c 200M >> f`) leaves such a state; undo compares it
// like any other and puts back the saved content byte for byte, since the
// journal saved the whole file before (it was under the bound then). What
// it cannot see is a later change past the first FileBytes bytes that
// keeps the size and the time.
const LargeStatePrefix = "large:"

// largeState is a file's LargeStatePrefix state.
func largeState(size int64, mtime int64, prefixSum string) string {
	return fmt.Sprintf("%s%d:%d:%s", LargeStatePrefix, size, mtime, prefixSum)
}

// LargeSize is the size a LargeStatePrefix state records.
func LargeSize(s string) (int64, bool) {
	rest, ok := strings.CutPrefix(s, LargeStatePrefix)
	if !ok {
		return 0, false
	}
	size, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	mt, sum, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	if _, err := strconv.ParseInt(mt, 10, 64); err != nil {
		return 0, false
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return 0, false
	}
	return n, true
}

// MaxCommandBytes bounds the bytes one command's targets may hold in all
// (files and trees): what the journal saves before a shell command, and
// what State reads of one tree.
const MaxCommandBytes = 64 << 20

// StateBounds bound what State reads to hash a path: the bytes of each
// file, and for a directory tree its entries and its files' bytes in all.
// Zero fields take the journal's defaults (DefaultMaxBytes,
// MaxCommandBytes, MaxTreeEntries).
type StateBounds struct {
	FileBytes, TreeBytes int64
	Entries              int
}

// Bounds are the journal's own: MaxBytes a file, MaxCommandBytes and
// MaxTreeEntries a tree. Nothing it saved is over them.
func (j *Journal) Bounds() StateBounds { return StateBounds{FileBytes: j.MaxBytes}.orDefault() }

func (b StateBounds) orDefault() StateBounds {
	if b.FileBytes <= 0 {
		b.FileBytes = DefaultMaxBytes
	}
	if b.TreeBytes <= 0 {
		b.TreeBytes = MaxCommandBytes
	}
	if b.Entries <= 0 {
		b.Entries = MaxTreeEntries
	}
	return b
}

// String says the bounds in words, for messages.
func (b StateBounds) String() string {
	return fmt.Sprintf("%d bytes a file, %d entries and %d bytes a directory tree", b.FileBytes, b.Entries, b.TreeBytes)
}

// State is p's state on the host as the journal compares it: its
// content's SHA-256 (hex, links followed), Absent, TreeState when it is a
// directory, SpecialPrefix and its kind for a fifo, socket or device, or
// TooLarge when it holds more than b. What it reads is
// bounded by b: never the whole of a large file or tree.
func State(ctx context.Context, r TreeReader, p string, b StateBounds) (string, error) {
	b = b.orDefault()
	if k, ok := specialKind(ctx, r, p); ok {
		return SpecialPrefix + k, nil
	}
	sum, over, err := hashFile(ctx, r.ReadFile, p, b.FileBytes)
	switch {
	case over:
		return large(ctx, r, p, sum), nil
	case err == nil:
		return sum, nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.Is(err, fs.ErrNotExist):
		return Absent, nil
	}
	l, lerr := r.ListTree(ctx, p)
	if lerr != nil || l.Entries[0].Type != 'd' {
		return "", err // not a directory: the read's error says why
	}
	if len(l.Entries) > b.Entries {
		return TooLarge, nil
	}
	var total int64
	for _, e := range l.Entries {
		if e.Type != 'f' {
			continue
		}
		if total += e.Size; e.Size > b.FileBytes || total > b.TreeBytes {
			return TooLarge, nil
		}
	}
	left := b.TreeBytes
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Type != 'f' {
			continue
		}
		// Bounded again: a file may have grown since it was listed.
		sum, over, err := hashFile(ctx, r.ReadFile, path.Join(p, e.Path), min(b.FileBytes, left))
		switch {
		case over:
			return TooLarge, nil
		case err != nil:
			return "", fmt.Errorf("read %s: %w", path.Join(p, e.Path), err)
		}
		e.SHA256 = sum
		left -= e.Size
	}
	return TreeState(l.Entries), nil
}

// large is the state of the regular file p over the bound whose first
// bytes hash to prefixSum: LargeStatePrefix's when r can Stat it, else
// TooLarge.
func large(ctx context.Context, r any, p, prefixSum string) string {
	var stat func(context.Context, string) (fs.FileInfo, error)
	switch s := r.(type) {
	case LargeStater:
		stat = s.StatLarge
	case Stater:
		stat = s.Stat
	default:
		return TooLarge
	}
	fi, err := stat(ctx, p)
	if err != nil || !fi.Mode().IsRegular() {
		return TooLarge
	}
	return largeState(fi.Size(), fi.ModTime().UnixNano(), prefixSum)
}

// LargeStater is a reader that Stats a file over the bound (for its
// LargeStatePrefix state) even where it does not Stat before every read
// (become: one more sudo per target there, here only for a large file).
type LargeStater interface {
	StatLarge(ctx context.Context, path string) (fs.FileInfo, error)
}

// hashFile is the SHA-256 (hex) of the file p as read reads it; over
// reports that it holds more than max bytes, of which no more than max
// were read, and sum is then the SHA-256 of its first max bytes.
func hashFile(ctx context.Context, read func(context.Context, string, io.Writer) (int64, error), p string, max int64) (sum string, over bool, err error) {
	h := sha256.New()
	bw := &boundedHash{w: h, n: max}
	_, err = read(ctx, p, bw)
	if bw.over {
		return hex.EncodeToString(h.Sum(nil)), true, nil
	}
	if err != nil {
		return "", false, err
	}
	return hex.EncodeToString(h.Sum(nil)), false, nil
}

// boundedHash takes at most n bytes, then fails and says it was over.
type boundedHash struct {
	w    io.Writer
	n    int64
	over bool
}

var errOverBound = errors.New("over the bound undo compares")

func (b *boundedHash) Write(p []byte) (int, error) {
	if int64(len(p)) > b.n {
		b.over = true
		b.w.Write(p[:b.n]) // the first bytes: a large file's prefix hash (a hash's Write cannot fail)
		b.n = 0
		return 0, errOverBound
	}
	b.n -= int64(len(p))
	return b.w.Write(p)
}

// stateOf is State through a restorer: without ListTree, a directory's
// state is the read's error.
func stateOf(ctx context.Context, w FileRestorer, p string, b StateBounds) (string, error) {
	if tr, ok := w.(TreeReader); ok {
		return State(ctx, tr, p, b)
	}
	b = b.orDefault()
	if k, ok := specialKind(ctx, w, p); ok {
		return SpecialPrefix + k, nil
	}
	sum, over, err := hashFile(ctx, w.ReadFile, p, b.FileBytes)
	switch {
	case over:
		return large(ctx, w, p, sum), nil
	case err == nil:
		return sum, nil
	case errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil:
		return Absent, nil
	}
	return "", err
}

// Stater is a reader that can say what a path is without opening it (a
// transport's Stat: links followed, as ReadFile follows them). State and
// undo's checks ask it first where the reader has it.
type Stater interface {
	Stat(ctx context.Context, path string) (fs.FileInfo, error)
}

// SpecialPrefix starts the state of a fifo, socket or device
// ("special:fifo"): it is never opened (a fifo's open waits for a writer
// for ever, a device's may do anything), and undo compares its kind, so
// that a session that put a fifo where a directory was (rm -r d; mkfifo
// d) is undone like any other type change.
const SpecialPrefix = "special:"

// specialKinds are the kinds a special state names.
var specialKinds = []string{"fifo", "socket", "device", "special file"}

// specialKind reports what p is when r can stat p and p is a fifo,
// socket or device. Anything else (no Stat, a missing path, an error) is
// left to the read.
func specialKind(ctx context.Context, r any, p string) (string, bool) {
	s, ok := r.(Stater)
	if !ok {
		return "", false
	}
	fi, err := s.Stat(ctx, p)
	if err != nil {
		return "", false
	}
	if m := fi.Mode(); !m.IsRegular() && !m.IsDir() {
		return kindOf(m), true
	}
	return "", false
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// HostState reports whether s is a state a host's worker may say of a
// file read after a command (confine's state request,
// transport.AfterStates) in place of State: Absent, a content's SHA-256
// (lower-case hexadecimal) or a special file's kind. Anything else (a
// tree's, a large file's) State reads itself.
func HostState(s string) bool {
	if s == Absent {
		return true
	}
	if k, ok := strings.CutPrefix(s, SpecialPrefix); ok {
		return slices.Contains(specialKinds, k)
	}
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
