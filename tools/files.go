package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// zeroPolicy is for constructors of tools that need no policy.
var zeroPolicy safety.Policy

// failure is a model-fixable problem found on the way: it becomes an
// ErrorOutput. Anything else returned beside it is infrastructure.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func fail(format string, args ...any) error { return &failure{fmt.Sprintf(format, args...)} }

// finish turns err into Run's pair: a *failure is an ErrorOutput, other
// errors are returned.
func finish(name string, out Output, err error) (Output, error) {
	var f *failure
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &f):
		return ErrorOutput("%s: %s", name, f.msg), nil
	}
	return Output{}, fmt.Errorf("%s: %w", name, err)
}

// resolve applies the policy's path rules to a file tool's path.
func (c *config) resolve(ctx context.Context, tr transport.Transport, op safety.FileOp, p string) (string, error) {
	home, err := c.home(ctx, tr)
	if err != nil {
		return "", err
	}
	resolved, _, err := c.policy.CheckPath(op, p, home)
	if err != nil {
		return "", fail("%v", err)
	}
	return resolved, nil
}

// fileErr sorts a transport file error into infrastructure or a failure.
func fileErr(ctx context.Context, op, p string, err error) error {
	switch {
	case infraError(ctx, err):
		return fmt.Errorf("%s %s: %w", op, p, err)
	case errors.Is(err, fs.ErrNotExist):
		return fail("%s: no such file or directory", p)
	case errors.Is(err, fs.ErrPermission):
		return fail("%s: permission denied", p)
	}
	return fail("%s %s: %v", op, p, err)
}

// current is a file's content before a change.
type current struct {
	data    []byte
	existed bool
	mode    fs.FileMode
}

// readCurrent reads the regular file at p, refusing more than limit bytes
// (limit <= 0: no limit). A missing file is existed false when missingOK,
// a failure otherwise.
func (c *config) readCurrent(ctx context.Context, tr transport.Transport, op safety.FileOp, p string, missingOK bool) (current, error) {
	fi, err := tr.Stat(ctx, p)
	if err != nil {
		if missingOK && errors.Is(err, fs.ErrNotExist) && !infraError(ctx, err) {
			return current{}, nil
		}
		return current{}, fileErr(ctx, "stat", p, err)
	}
	if fi.IsDir() {
		return current{}, fail("%s is a directory", p)
	}
	if !fi.Mode().IsRegular() {
		return current{}, fail("%s is not a regular file", p)
	}
	if err := c.policy.CheckSize(op, fi.Size()); err != nil {
		return current{}, fail("%s: %v", p, err)
	}
	var buf bytes.Buffer
	lw := &limitWriter{w: &buf, n: c.capFor(op)}
	if _, err := tr.ReadFile(ctx, p, lw); err != nil {
		if lw.over {
			return current{}, fail("%s: grew past the size limit while being read", p)
		}
		return current{}, fileErr(ctx, "read", p, err)
	}
	data := buf.Bytes()
	if data == nil {
		data = []byte{} // an empty file: content, not "unknown"
	}
	return current{data: data, existed: true, mode: fi.Mode().Perm()}, nil
}

func (c *config) capFor(op safety.FileOp) int64 {
	if op == safety.FileRead {
		return c.policy.MaxReadBytes
	}
	return c.policy.MaxWriteBytes
}

var errLimit = errors.New("size limit reached")

// limitWriter fails once more than n bytes (n <= 0: unlimited) arrive.
type limitWriter struct {
	w    io.Writer
	n    int64
	seen int64
	over bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.seen += int64(len(p))
	if l.n > 0 && l.seen > l.n {
		l.over = true
		return 0, errLimit
	}
	return l.w.Write(p)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// change describes replacing cur at p with data.
func change(p string, cur current, data []byte) FileChange {
	return FileChange{Path: p, Existed: cur.existed, OldSHA256: contentSHA(cur), OldMode: cur.mode, NewSHA256: sha(data), Size: int64(len(data))}
}

// commit writes data over p after the undo hook has seen the old content.
// The hook never gets existed true with nil content: that would record an
// empty file, and undo would truncate the real one.
func (c *config) commit(ctx context.Context, tr transport.Transport, fc FileChange, cur current, data []byte) error {
	if cur.existed && cur.data == nil {
		return fail("%s: the existing content could not be captured, so the change could not be undone", fc.Path)
	}
	if c.beforeChange != nil {
		if err := c.beforeChange(ctx, tr, fc, cur.data); err != nil {
			return fmt.Errorf("undo journal for %s: %w", fc.Path, err)
		}
	}
	if _, err := tr.WriteFile(ctx, fc.Path, bytes.NewReader(data), 0o644); err != nil {
		return fileErr(ctx, "write", fc.Path, err)
	}
	return nil
}
