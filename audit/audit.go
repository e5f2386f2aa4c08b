package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
)

// Log is the append-only audit log: one JSON line per tool call,
// denied and skipped ones included. It is safe for concurrent use; lines
// never interleave.
type Log struct {
	mu      sync.Mutex // the file's writes, and written
	f       *os.File
	path    string
	written uint64 // lines written

	syncMu sync.Mutex // one fsync at a time, and synced
	synced uint64     // lines known to be on disk
}

// Open opens (creating it and its directories, 0700) the audit log at
// path for appending; the file is created 0600, and an existing one that
// others can read is narrowed to 0600, since parameters and output may
// hold secrets that redaction missed.
func Open(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("open audit log: %w", err)
		}
	}
	return &Log{f: f, path: path}, nil
}

// Path is the file the log appends to.
func (a *Log) Path() string { return a.path }

// Close closes the log.
func (a *Log) Close() error {
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.f.Close(); err != nil {
		return fmt.Errorf("close audit log: %w", err)
	}
	return nil
}

// Audit decisions.
const (
	Allowed = "allowed"
	Denied  = "denied"
	Skipped = "skipped"
)

// Entry is one tool call in the audit log. Log redacts Params, Output and
// Error; callers pass them as they are.
type Entry struct {
	// Time defaults to now; it is written as RFC 3339 UTC with nanoseconds.
	Time    time.Time
	Session string
	Host    string
	Tool    string
	// Params are the resolved parameters.
	Params map[string]any
	Risk   safety.Assessment
	// Decision is Allowed, Denied or Skipped (a false
	// condition); By is safety.ByPolicy or safety.ByUser.
	Decision string
	By       string
	// ExitCode is nil when nothing ran.
	ExitCode *int
	// Output is the tool's output; only its first OutputHeadBytes are kept.
	Output   string
	Duration time.Duration
	// Error is a failure to run the tool (not a non-zero exit).
	Error string
	// As is the user the step ran as through become (sudo); "" for the
	// login user.
	As string
}

// OutputHeadBytes is how much of a tool's output the audit log keeps.
const OutputHeadBytes = 512

// auditLine is the JSON shape of an Entry.
type auditLine struct {
	Time       string         `json:"time"`
	Session    string         `json:"session"`
	Host       string         `json:"host"`
	Tool       string         `json:"tool"`
	Parameters map[string]any `json:"parameters"`
	Risk       string         `json:"risk"`
	Reasons    []string       `json:"reasons,omitempty"`
	Decision   string         `json:"decision"`
	By         string         `json:"by,omitempty"`
	ExitCode   *int           `json:"exit_code,omitempty"`
	Output     string         `json:"output,omitempty"`
	DurationMS int64          `json:"duration_ms"`
	Error      string         `json:"error,omitempty"`
	As         string         `json:"as,omitempty"`
}

// Append appends e as one JSON line and syncs it to disk. It writes even when
// ctx is done: an interrupted call belongs in the trail too.
func (a *Log) Append(ctx context.Context, e Entry) error {
	_ = ctx
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	reasons := make([]string, len(e.Risk.Reasons))
	for i, r := range e.Risk.Reasons {
		reasons[i] = redact.String(r)
	}
	b, err := json.Marshal(auditLine{
		Time:       t.UTC().Format(time.RFC3339Nano),
		Session:    e.Session,
		Host:       e.Host,
		Tool:       e.Tool,
		Parameters: redact.Params(e.Params),
		Risk:       e.Risk.Level.String(),
		Reasons:    reasons,
		Decision:   e.Decision,
		By:         e.By,
		ExitCode:   e.ExitCode,
		Output:     outputHead(e.Output),
		DurationMS: e.Duration.Milliseconds(),
		Error:      redact.String(e.Error),
		As:         e.As,
	})
	if err != nil {
		// Parameters of a type JSON cannot encode: keep the line, say so.
		b, err = json.Marshal(auditLine{
			Time: t.UTC().Format(time.RFC3339Nano), Session: e.Session, Host: e.Host, Tool: e.Tool,
			Parameters: map[string]any{"_unencodable": redact.String(fmt.Sprint(e.Params))},
			Risk:       e.Risk.Level.String(), Reasons: reasons, Decision: e.Decision, By: e.By,
			ExitCode: e.ExitCode, Output: outputHead(e.Output), DurationMS: e.Duration.Milliseconds(),
			Error: redact.String(e.Error),
		})
		if err != nil {
			return fmt.Errorf("audit log: encode entry: %w", err)
		}
	}
	b = append(b, '\n')
	a.mu.Lock()
	if _, err := a.f.Write(b); err != nil {
		a.mu.Unlock()
		return fmt.Errorf("audit log %s: write: %w", a.path, err)
	}
	a.written++
	seq := a.written
	a.mu.Unlock()
	return a.sync(seq)
}

// syncFile is (*os.File).Sync; tests slow it down.
var syncFile = (*os.File).Sync

// sync returns once line seq is on disk: by its own fsync, or by one that
// another call began after the line was written. Calls that arrive while
// an fsync runs share the next one (a group commit): with a batch's many
// hosts logging at once, one fsync per line in turn was a queue every
// step waited in.
func (a *Log) sync(seq uint64) error {
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	if a.synced >= seq {
		return nil
	}
	a.mu.Lock()
	upto := a.written
	a.mu.Unlock()
	if err := syncFile(a.f); err != nil {
		return fmt.Errorf("audit log %s: sync: %w", a.path, err)
	}
	a.synced = upto
	return nil
}

// outputHead redacts a generous head of the output, then keeps the first
// OutputHeadBytes, cut on a rune boundary; redacting first keeps a secret
// cut by the limit from leaking its first half.
func outputHead(s string) string {
	const window = 16 << 10
	if len(s) > window {
		s = s[:window]
	}
	s = redact.String(s)
	if len(s) <= OutputHeadBytes {
		return s
	}
	cut := OutputHeadBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
