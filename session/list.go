package session

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/autoshell/agent/statedir"
)

// ErrNotFound is returned for a session id with no session file.
var ErrNotFound = errors.New("no such session")

// Load reads session id under stateDir. A session whose file is damaged
// past some line comes back with the error (and what came before it).
func Load(stateDir, id string) (*Session, error) {
	if err := statedir.CheckSessionID(id); err != nil {
		return nil, err
	}
	p := Path(stateDir, id)
	recs, err := ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	s := Build(id, recs)
	if running(p) {
		s.Info.State = StateRunning
	}
	if err != nil {
		s.Info.Error = err.Error()
		return s, fmt.Errorf("session %s: %w", id, err)
	}
	return s, nil
}

// List returns the sessions under stateDir, newest first; a session that
// cannot be read is listed with its Error.
func List(stateDir string) ([]Info, error) {
	dir := filepath.Join(stateDir, "sessions")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []Info
	for _, e := range ents {
		if !e.IsDir() || statedir.CheckSessionID(e.Name()) != nil {
			continue
		}
		if _, err := os.Stat(Path(stateDir, e.Name())); err != nil {
			continue // a session of an older agent: its undo journal only
		}
		s, err := Load(stateDir, e.Name())
		switch {
		case s != nil:
			out = append(out, s.Info)
		case err != nil:
			out = append(out, Info{ID: e.Name(), State: StateFailed, Error: err.Error()})
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return cmp.Compare(b.ID, a.ID) })
	return out, nil
}

// running reports whether an agent holds the session file's lock.
func running(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Unfinished reports whether agent resume can take the session up.
func (i Info) Unfinished() bool {
	return i.State == StateInterrupted || i.State == StateFailed
}
