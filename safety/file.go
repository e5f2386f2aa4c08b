package safety

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// FileOp is what a file tool does to a path.
type FileOp int

const (
	// FileRead is read_file.
	FileRead FileOp = iota
	// FileWrite is write_file (overwrite or append).
	FileWrite
	// FileEdit is edit_file.
	FileEdit
)

// String returns "read", "write" or "edit".
func (op FileOp) String() string {
	switch op {
	case FileRead:
		return "read"
	case FileWrite:
		return "write"
	case FileEdit:
		return "edit"
	}
	return fmt.Sprintf("FileOp(%d)", int(op))
}

// ResolvePath turns a file tool's path into the absolute, cleaned path the
// checks and the tool use: "~" and "~/…" are home, relative paths are
// relative to home. It refuses (ErrRefused) empty paths, NUL bytes, a
// relative path whose ".." climbs out of home, and ".." in an absolute
// path, which may not mean what it says once symlinks are followed.
func ResolvePath(p, home string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path", ErrRefused)
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrRefused)
	case !path.IsAbs(home):
		return "", fmt.Errorf("%w: home directory %q is not absolute", ErrRefused, home)
	}
	home = path.Clean(home)
	var rel string
	switch {
	case p == "~":
		return home, nil
	case strings.HasPrefix(p, "~/"):
		rel = p[2:]
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%w: %s: ~user paths are not supported", ErrRefused, p)
	case path.IsAbs(p):
		if hasDotDot(p) {
			return "", fmt.Errorf("%w: %s: absolute path contains ..", ErrRefused, p)
		}
		return path.Clean(p), nil
	default:
		rel = p
	}
	if c := path.Clean(rel); c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", fmt.Errorf("%w: %s: path escapes %s with ..", ErrRefused, p, home)
	}
	return path.Join(home, rel), nil
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// ClassifyFile classifies a file tool's access to a path: writes and edits
// under a system root or a protected path are High, other writes Medium;
// reads of sensitive files are High, other reads Safe. A path starting
// with "~/" is in the home directory; other paths should be absolute
// (see ResolvePath) — a relative one is High.
func (p Policy) ClassifyFile(op FileOp, file string) Assessment {
	return p.classifyFile(op, file, "")
}

func (p Policy) classifyFile(op FileOp, file, home string) Assessment {
	var a Assessment
	abs := file
	if strings.HasPrefix(file, "~/") || file == "~" {
		abs = path.Join(homeStandIn, strings.TrimPrefix(file, "~"))
	}
	if !path.IsAbs(abs) {
		a.add(High, fmt.Sprintf("%s %s: path is not absolute", op, file))
		return a
	}
	abs = path.Clean(abs)
	var l Level
	var why string
	switch op {
	case FileRead:
		l, why = p.readRisk(abs, home, false)
	case FileWrite, FileEdit:
		l, why = p.writeRisk(abs, home, false)
		if l == Safe {
			l, why = Medium, "writes a file"
		}
	default:
		l, why = High, "unknown file operation"
	}
	if l > Safe {
		a.add(l, fmt.Sprintf("%s %s: %s", op, file, why))
	}
	return a
}

// CheckPath resolves a file tool's path against home (see ResolvePath) and
// classifies the access. err (wrapping ErrRefused) means the tool must not
// run whatever the approval mode; otherwise resolved is the path to use.
func (p Policy) CheckPath(op FileOp, file, home string) (resolved string, a Assessment, err error) {
	resolved, err = ResolvePath(file, home)
	if err != nil {
		return "", Assessment{}, err
	}
	return resolved, p.classifyFile(op, resolved, path.Clean(home)), nil
}

// CheckSize refuses (ErrTooLarge) reading or writing more bytes than the
// policy allows; a cap of 0 or less means no cap.
func (p Policy) CheckSize(op FileOp, size int64) error {
	limit := p.MaxWriteBytes
	if op == FileRead {
		limit = p.MaxReadBytes
	}
	if limit > 0 && size > limit {
		return fmt.Errorf("%w: %s of %d bytes exceeds the limit of %d bytes", ErrTooLarge, op, size, limit)
	}
	return nil
}

// CheckContent refuses (ErrBinary) writing or editing a file whose current
// content is binary, when the policy says so. Reads are not refused.
func (p Policy) CheckContent(op FileOp, current []byte) error {
	if op != FileRead && p.RefuseBinary && IsBinary(current) {
		return fmt.Errorf("%w: %s of a binary file", ErrBinary, op)
	}
	return nil
}

// IsBinary reports whether content looks binary: a NUL byte or invalid
// UTF-8 in its first 8 KiB (a rune cut at the end does not count).
func IsBinary(content []byte) bool {
	head := content[:min(len(content), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n == 1 {
			return len(head) >= utf8.UTFMax || utf8.FullRune(head)
		}
		head = head[n:]
	}
	return false
}
