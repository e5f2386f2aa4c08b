package journal

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// journalIndexes is what this process has read of each session's
// index.jsonl, so that Open reads only the lines appended since
// its last call on the same file: a batch opens one journal per host of
// the same session, and reading the whole index (every other host's
// records) each time made a 2,000-host batch quadratic — 57% of agent's
// CPU (docs/bench.md). Each line is still parsed and checked once, and
// what Open sees is the file as it is when it is called, records
// of other processes included.
var journalIndexes = struct {
	sync.Mutex
	m map[string]*indexView
}{m: map[string]*indexView{}}

// indexView is what an index file held up to off: the largest blob
// number and, per host, the paths recorded and whether it was restored.
type indexView struct {
	mu    sync.Mutex
	fi    os.FileInfo // the file read; another file (or a shorter one) is read afresh
	off   int64       // bytes read: whole lines
	head  []byte      // its first bytes (up to headBytes): a file made anew in its place, even with the same inode number, differs
	maxN  int
	hosts map[string]*hostIndex
}

type hostIndex struct {
	seen     map[string]bool
	restored bool
}

func (v *indexView) add(recs []indexRecord) {
	for _, r := range recs {
		v.maxN = max(v.maxN, r.N)
		h := v.hosts[r.Host]
		if h == nil {
			h = &hostIndex{seen: map[string]bool{}}
			v.hosts[r.Host] = h
		}
		if r.Restored {
			h.restored = true
		} else {
			h.seen[r.Path] = true
		}
	}
}

// The index is shared by every host of a run, in this process and in
// others, so it is locked (flock(2) on the index itself): an append holds
// LOCK_EX for its one write, a read holds LOCK_SH. A reader never sees a
// live writer's half line; an unterminated last line is a writer killed
// mid-write (its Record never returned, so nothing was changed after it)
// and is ignored by readers and cut off by the next append. A line counts
// once its newline is written.

// lockIndex takes how (syscall.LOCK_SH or LOCK_EX) on the index f.
func lockIndex(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			if err != nil {
				return fmt.Errorf("lock %s: %w", f.Name(), err)
			}
			return nil
		}
	}
}

func unlockIndex(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// readIndexFrom reads the index f from off to its last newline, under
// LOCK_SH: whole lines only.
func readIndexFrom(f *os.File, off int64) ([]byte, error) {
	if err := lockIndex(f, syscall.LOCK_SH); err != nil {
		return nil, err
	}
	defer unlockIndex(f)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return data[:bytes.LastIndexByte(data, '\n')+1], nil
}

// cutTornTail removes an unterminated last line from the index f, which
// the caller holds LOCK_EX on: a writer died mid-write, and the next
// line must not be glued to its fragment.
func cutTornTail(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	size := fi.Size()
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	from := max(0, size-maxIndexLine-1)
	tail := make([]byte, size-from)
	if _, err := f.ReadAt(tail, from); err != nil {
		return err
	}
	return f.Truncate(from + int64(bytes.LastIndexByte(tail, '\n')+1))
}

// headBytes is how much of an index's start is kept to tell it from a
// file made anew in its place.
const headBytes = 512

// sameHead reports whether f still starts with head.
func sameHead(f *os.File, head []byte) bool {
	if len(head) == 0 {
		return true
	}
	b := make([]byte, len(head))
	n, _ := f.ReadAt(b, 0)
	return bytes.Equal(b[:n], head)
}

// hostState reads what the index file name says of host: the largest blob
// number of any host, host's recorded paths (a copy) and whether its
// files were restored. A missing file is an fs.ErrNotExist error, a bad
// line an error naming it, as from readIndex.
func hostState(name, host string) (maxN int, seen map[string]bool, restored bool, err error) {
	journalIndexes.Lock()
	v := journalIndexes.m[name]
	if v == nil {
		v = &indexView{}
		journalIndexes.m[name] = v
	}
	journalIndexes.Unlock()

	v.mu.Lock()
	defer v.mu.Unlock()
	f, err := os.Open(name)
	if err != nil {
		return 0, nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, false, err
	}
	if v.fi == nil || !os.SameFile(v.fi, fi) || fi.Size() < v.off || !sameHead(f, v.head) {
		v.fi, v.off, v.maxN, v.hosts, v.head = fi, 0, 0, map[string]*hostIndex{}, nil
	}
	data, err := readIndexFrom(f, v.off)
	if err != nil {
		return 0, nil, false, err
	}
	whole := len(data)
	recs, err := parseIndex(bytes.NewReader(data))
	if err != nil {
		// A bad line: read the whole file again for readIndex's own error,
		// whose line number counts from the start.
		if _, rerr := readIndex(name); rerr != nil {
			return 0, nil, false, rerr
		}
		return 0, nil, false, fmt.Errorf("%s: %w", name, err)
	}
	v.add(recs)
	if len(v.head) < headBytes {
		n := min(headBytes, int(v.off)+whole)
		v.head = append(v.head[:0:0], append(v.head, data...)[:n]...)
	}
	v.off += int64(whole)
	maxN = v.maxN
	seen = map[string]bool{}
	if h := v.hosts[host]; h != nil {
		restored = h.restored
		for p := range h.seen {
			seen[p] = true
		}
	}
	return maxN, seen, restored, nil
}
