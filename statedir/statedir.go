package statedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Dir is where agent keeps its audit log, sessions and undo journal:
// $XDG_STATE_HOME/agent, or ~/.local/state/agent when XDG_STATE_HOME is
// unset or not absolute (as the XDG base directory spec says to ignore
// relative values). It is not created here.
func Dir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agent"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "agent"), nil
}

// AuditPath is the audit log: Dir()/audit.log.
func AuditPath() (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "audit.log"), nil
}

// SessionsDir holds one directory per session: Dir()/sessions.
func SessionsDir() (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return Sessions(d), nil
}

// Sessions is stateDir's directory of sessions, as SessionsDir is
// Dir's.
func Sessions(stateDir string) string { return filepath.Join(stateDir, "sessions") }

// sessionTimeFormat makes session ids sort by time as strings.
const sessionTimeFormat = "20060102T150405Z"

// NewSessionID returns a fresh session id such as 20261121T090102Z-ab12cd:
// the UTC start time, which makes ids sort by time, and 24 random bits so
// runs started in the same second differ.
func NewSessionID() string { return newSessionID(time.Now()) }

func newSessionID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return t.UTC().Format(sessionTimeFormat) + "-" + hex.EncodeToString(b[:])
}

// ErrBadSessionID is returned for a session id that cannot name a
// directory under SessionsDir.
var ErrBadSessionID = errors.New("invalid session id")

// CheckSessionID accepts ids made of letters, digits, '-', '_' and '.',
// starting with a letter or digit, at most 128 bytes: anything
// NewSessionID makes, and nothing that could leave the sessions directory.
func CheckSessionID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("%w: %q", ErrBadSessionID, id)
	}
	for i, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			i > 0 && (r == '-' || r == '_' || r == '.')
		if !ok {
			return fmt.Errorf("%w: %q", ErrBadSessionID, id)
		}
	}
	return nil
}
