package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
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

// hostState reads what the index file name says of host: the largest blob
// number of any host, host's recorded paths (a copy) and whether its
// files were restored. A missing file is an fs.ErrNotExist error, a bad
// line an error naming it, as from readIndex.
func hostState(name, host string) (maxN int, seen map[string]bool, restored bool, err error) {
	maxN, seen, restored, err = readHostState(name, host)
	if errors.Is(err, errTornTail) {
		tornWait()
		maxN, seen, restored, err = readHostState(name, host)
	}
	if errors.Is(err, errTornTail) {
		_, err = readIndex(name) // the last line is bad after all: say so as readIndex does
		if err == nil {
			err = fmt.Errorf("%s: the last line changed while it was read", name)
		}
	}
	return maxN, seen, restored, err
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

// tornWait waits for an append being written as the index was read: it
// is one write(2), done in a moment. Tests finish the line instead.
var tornWait = func() { time.Sleep(10 * time.Millisecond) }

// errTornTail is an unterminated last line that does not parse: most
// likely a line being appended.
var errTornTail = errors.New("torn last line")

func readHostState(name, host string) (maxN int, seen map[string]bool, restored bool, err error) {
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
	if _, err := f.Seek(v.off, io.SeekStart); err != nil {
		return 0, nil, false, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, nil, false, err
	}
	whole := bytes.LastIndexByte(data, '\n') + 1
	recs, err := parseIndex(bytes.NewReader(data[:whole]))
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
	// An unterminated last line counts, but is read again next time.
	tail, err := parseIndex(bytes.NewReader(data[whole:]))
	if err != nil {
		return 0, nil, false, errTornTail
	}
	maxN = v.maxN
	seen = map[string]bool{}
	if h := v.hosts[host]; h != nil {
		restored = h.restored
		for p := range h.seen {
			seen[p] = true
		}
	}
	for _, r := range tail {
		maxN = max(maxN, r.N)
		switch {
		case r.Host != host:
		case r.Restored:
			restored = true
		default:
			seen[r.Path] = true
		}
	}
	return maxN, seen, restored, nil
}
