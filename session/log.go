package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/autoshell/agent/statedir"
)

// FileName is a session's record inside its directory.
const FileName = "session.jsonl"

// ErrLocked is returned when another agent is recording the session.
var ErrLocked = errors.New("session is in use by another agent")

// Log appends a session's records. It is safe for concurrent use (the
// hosts of a batch share one). A failure to write is kept (Err) and
// stops the recording, not the run.
type Log struct {
	id   string
	path string

	mu      sync.Mutex
	f       *os.File
	err     error
	now     func() time.Time
	written uint64 // records written

	// syncMu is held by the one goroutine syncing; a sync covers every
	// record written before it began (synced), so the hosts of a batch
	// waiting at the same time share one.
	syncMu sync.Mutex
	synced uint64
	noSync bool // NoSync: records are written, never synced
}

// Path is the session file of id under stateDir.
func Path(stateDir, id string) string {
	return filepath.Join(stateDir, "sessions", id, FileName)
}

// Create starts the record of a new session id under stateDir with st.
func Create(stateDir, id string, st Start) (*Log, error) {
	if err := statedir.CheckSessionID(id); err != nil {
		return nil, err
	}
	p := Path(stateDir, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	l, err := lockLog(id, p, f)
	if err != nil {
		return nil, err
	}
	l.Write(Record{R: RecStart, Start: &st}, true)
	return l, l.Err()
}

// Append opens an existing session to record more (agent resume). A torn
// last line is cut off first, so the next record starts on a line of its
// own. It fails with ErrLocked while another agent records the session.
func Append(stateDir, id string) (*Log, error) {
	if err := statedir.CheckSessionID(id); err != nil {
		return nil, err
	}
	p := Path(stateDir, id)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	l, err := lockLog(id, p, f)
	if err != nil {
		return nil, err
	}
	if err := cutTorn(f); err != nil {
		l.Close()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return l, nil
}

func lockLog(id, p string, f *os.File) (*Log, error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("session %s: %w", id, ErrLocked)
		}
		return nil, fmt.Errorf("session %s: lock: %w", id, err)
	}
	return &Log{id: id, path: p, f: f, now: time.Now}, nil
}

// cutTorn truncates f after its last newline and leaves the offset at the
// end.
func cutTorn(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	end := size
	buf := make([]byte, 4096)
	for end > 0 {
		n := int64(len(buf))
		if end < n {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if end != size {
		if err := f.Truncate(end); err != nil {
			return err
		}
	}
	_, err = f.Seek(0, io.SeekEnd)
	return err
}

// Write appends r (its time set now), and when sync is set waits until it
// is on disk. After a failure nothing more is written.
func (l *Log) Write(r Record, sync bool) {
	if l == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = l.now().UTC()
	}
	r.Output = clip(r.Output)
	b, err := json.Marshal(r)
	if err != nil {
		b, err = json.Marshal(Record{R: r.R, Time: r.Time, Host: r.Host, Step: r.Step, Status: r.Status,
			Text: "record not encodable: " + err.Error()})
	}
	l.mu.Lock()
	f := l.f
	if l.err == nil && f != nil && err == nil {
		_, err = f.Write(append(b, '\n'))
		if err != nil {
			l.err = fmt.Errorf("session %s: write: %w", l.id, err)
		}
	}
	l.written++
	seq := l.written
	sync = sync && !l.noSync
	l.mu.Unlock()
	if sync && err == nil && f != nil {
		l.sync(f, seq)
	}
}

// WriteBehind appends r like Write with sync, but returns once it is
// written, its fsync running behind: a step's start record, whose fsync
// overlaps the step's confinement; Wait, before the step's command
// starts, returns once it is on disk.
func (l *Log) WriteBehind(r Record) {
	if l == nil {
		return
	}
	l.Write(r, false)
	l.mu.Lock()
	f, seq, sync := l.f, l.written, l.err == nil && !l.noSync
	l.mu.Unlock()
	if sync && f != nil {
		go l.sync(f, seq)
	}
}

// Wait returns once every record written so far is on disk (nothing to
// do under NoSync); a failure is Err's, as with Write.
func (l *Log) Wait() {
	if l == nil {
		return
	}
	l.mu.Lock()
	f, seq, sync := l.f, l.written, l.err == nil && !l.noSync
	l.mu.Unlock()
	if sync && f != nil {
		l.sync(f, seq)
	}
}

// NoSync makes l write its records without fsync: for a session nobody
// resumes (agent mcp's, whose records list the calls, name their undo
// and the commands to reap), a write that is in the kernel's cache
// survives a SIGKILL, which is all they need; only a crash of the
// machine could lose the last ones, and with them nothing left to reap.
// It saves a fsync per step start and end on each call.
func (l *Log) NoSync() {
	if l != nil {
		l.mu.Lock()
		l.noSync = true
		l.mu.Unlock()
	}
}

// sync returns once record seq is on disk: by its own fsync, or another
// goroutine's that began after it was written.
func (l *Log) sync(f *os.File, seq uint64) {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.synced >= seq {
		return
	}
	l.mu.Lock()
	upto := l.written
	l.mu.Unlock()
	if err := f.Sync(); err != nil {
		l.mu.Lock()
		if l.err == nil {
			l.err = fmt.Errorf("session %s: sync: %w", l.id, err)
		}
		l.mu.Unlock()
		return
	}
	l.synced = upto
}

// ID is the session's id; "" for a nil Log.
func (l *Log) ID() string {
	if l == nil {
		return ""
	}
	return l.id
}

// Err is the first failure to record, if any.
func (l *Log) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// End records how the session ended and closes the file.
func (l *Log) End(state string) {
	if l == nil {
		return
	}
	l.Write(Record{R: RecEnd, Status: state}, true)
	l.Close()
}

// Close releases the file (and its lock).
func (l *Log) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
