package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The chain: each line is one Record whose Seq is one more than the line
// before's and whose Prev is the SHA-256 (hex) of the line before, its
// bytes without the newline. The first line of all has Seq 1 and Prev "";
// the first line of a file that follows a rotated one is an Event
// "rotate" record naming that file, its Prev the rotated file's last
// line's hash. path+".head" holds the last line's seq, hash and the
// file's size, rewritten in place after each line (not synced: after a
// power loss it may lag, which Verify tells apart from a removal), so
// that an edit of the last line or the removal of lines at the end
// shows too. Its flock serialises the writers of every process.

// lock takes the writers' lock (the head file's flock).
func (a *Log) lock() error {
	for {
		err := syscall.Flock(int(a.head.Fd()), syscall.LOCK_EX)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("audit log %s: lock: %w", a.path, err)
		}
		return nil
	}
}

func (a *Log) unlock() { _ = syscall.Flock(int(a.head.Fd()), syscall.LOCK_UN) }

// reopen (re)opens the file at path and reads where its chain stands. A
// file whose last line is not a chained record is rotated away.
func (a *Log) reopen() error {
	f, err := openFile(a.path)
	if err != nil {
		return err
	}
	if a.f != nil {
		a.f.Close()
	}
	a.f = f
	return a.readTail()
}

// readTail sets seq, last and size from the file's last line.
func (a *Log) readTail() error {
	fi, err := a.f.Stat()
	if err != nil {
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	a.size = fi.Size()
	if a.size == 0 || !fi.Mode().IsRegular() {
		a.seq, a.last = 0, ""
		return nil
	}
	line, err := lastLine(a.path, a.size)
	if err != nil {
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	var r Record
	if json.Unmarshal(line, &r) != nil || r.Seq == 0 || !endsWithNewline(a.path, a.size) {
		// Not a chained record (a torn last write, a log from before
		// the chain): start a new file after it.
		a.last = lineHash(line)
		return a.rotate()
	}
	a.seq, a.last = r.Seq, lineHash(line)
	return nil
}

// catchUp follows what other processes did since this one last wrote: a
// rotation (path is another file now) or lines appended.
func (a *Log) catchUp() error {
	fi, err := a.f.Stat()
	if err != nil {
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	if pi, err := os.Stat(a.path); err != nil || !os.SameFile(fi, pi) {
		return a.reopen()
	}
	if fi.Size() != a.size {
		return a.readTail()
	}
	return nil
}

// appendLocked writes rec as the next line, under a.mu.
func (a *Log) appendLocked(rec *Record) error {
	if err := a.lock(); err != nil {
		return err
	}
	defer a.unlock()
	if err := a.catchUp(); err != nil {
		return err
	}
	max := a.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	if a.size >= max {
		if err := a.rotate(); err != nil {
			return err
		}
	}
	return a.writeRecord(rec)
}

// writeRecord writes rec chained after the last line.
func (a *Log) writeRecord(rec *Record) error {
	rec.Seq, rec.Prev = a.seq+1, a.last
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit log: encode entry: %w", err)
	}
	n, err := a.f.Write(append(b, '\n'))
	if err != nil {
		if n > 0 {
			a.size = -1 // a torn line: the next write reads the tail again
		}
		return fmt.Errorf("audit log %s: write: %w", a.path, err)
	}
	a.size += int64(n)
	a.seq, a.last = rec.Seq, lineHash(b)
	return a.writeHead()
}

// headSize is the head file's fixed length: "seq hash size\n", padded.
const headSize = 128

// writeHead rewrites the head in place.
func (a *Log) writeHead() error {
	h := fmt.Sprintf("%d %s %d", a.seq, a.last, a.size)
	h += strings.Repeat(" ", headSize-1-len(h)) + "\n"
	if _, err := a.head.WriteAt([]byte(h), 0); err != nil {
		return fmt.Errorf("audit log %s: write head: %w", a.path, err)
	}
	return nil
}

// rotate renames the file aside (PATH.TIME) and starts a new one whose
// first line names it and carries its last hash. The old file is synced
// first; it is not closed (an fsync of it may be under way), only
// forgotten: rotations are rare.
func (a *Log) rotate() error {
	_ = syncFile(a.f) // best effort: the new file's first line names it anyway
	old := a.path + "." + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(a.path, old); err != nil {
		return fmt.Errorf("audit log %s: rotate: %w", a.path, err)
	}
	f, err := openFile(a.path)
	if err != nil {
		return err
	}
	a.f, a.size = f, 0
	return a.writeRecord(&Record{Time: time.Now().UTC().Format(time.RFC3339Nano), Event: "rotate", Previous: filepath.Base(old)})
}

// lineHash is the hex SHA-256 of a line without its newline.
func lineHash(line []byte) string {
	h := sha256.Sum256(line)
	return hex.EncodeToString(h[:])
}

// lastLine reads the last line of the file at path (size bytes), without
// its newline.
func lastLine(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	end := size
	var buf []byte
	const chunk = 64 << 10
	for pos := size; pos > 0; {
		n := min(int64(chunk), pos)
		pos -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return nil, err
		}
		buf = append(b, buf...)
		t := buf
		if int64(len(buf)) == end-pos && len(t) > 0 && t[len(t)-1] == '\n' {
			t = t[:len(t)-1]
		}
		if i := bytes.LastIndexByte(t, '\n'); i >= 0 {
			return t[i+1:], nil
		}
		if pos == 0 {
			return t, nil
		}
	}
	return nil, nil
}

// endsWithNewline reports whether the file's last byte is a newline.
func endsWithNewline(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, size-1)
	return err == nil && b[0] == '\n'
}

// head is the head file's content.
type head struct {
	seq  uint64
	hash string
	size int64
}

// readHead reads path's head file; ok is false when there is none.
func readHead(path string) (h head, ok bool, err error) {
	b, err := os.ReadFile(path + ".head")
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(bytes.TrimSpace(b)) == 0) {
		return head{}, false, nil
	}
	if err != nil {
		return head{}, false, err
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return head{}, false, fmt.Errorf("%s.head: not \"seq hash size\"", path)
	}
	h.seq, err = strconv.ParseUint(f[0], 10, 64)
	if err == nil {
		h.size, err = strconv.ParseInt(f[2], 10, 64)
	}
	if err != nil {
		return head{}, false, fmt.Errorf("%s.head: %w", path, err)
	}
	h.hash = f[1]
	return h, true, nil
}
