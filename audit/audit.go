package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
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
// denied and skipped ones included, and one before a step runs. It is
// safe for concurrent use, and by several processes at once (an flock on
// the head file): lines never interleave, and each line carries its
// sequence number and the SHA-256 of the line before it (chain.go), so
// that an edited, removed or reordered line shows (Verify).
type Log struct {
	mu   sync.Mutex // the files, and the fields below
	f    *os.File   // the log, appended to
	head *os.File   // path+".head": the lock, and the last line's seq and hash
	path string
	// MaxBytes is the size past which the next line starts a new file
	// (the old one renamed with its time); 0 is DefaultMaxBytes.
	MaxBytes int64
	size     int64  // f's size after the last line this process saw
	seq      uint64 // the last line's seq
	last     string // the last line's SHA-256, hex
	written  uint64 // lines written

	syncMu sync.Mutex // one fsync at a time, and synced
	synced uint64     // lines known to be on disk

	behindMu  sync.Mutex
	behindSeq uint64 // the last line AppendBehind left to a background fsync
	behindErr error  // that fsync's failure: every later append fails with it
	behindWG  sync.WaitGroup
}

// DefaultMaxBytes is the size at which the log is rotated.
const DefaultMaxBytes = 64 << 20

// Open opens (creating it and its directories, 0700) the audit log at
// path for appending; the file is created 0600, and an existing one that
// others can read is narrowed to 0600, since parameters and output may
// hold secrets that redaction missed. A log whose last line is not a
// chained record (a torn write, a log from before the chain) is rotated
// away, its name kept in the new file's first line.
func Open(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	head, err := os.OpenFile(path+".head", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	a := &Log{head: head, path: path, size: -1}
	if err := a.lock(); err != nil {
		head.Close()
		return nil, err
	}
	defer a.unlock()
	if err := a.reopen(); err != nil {
		head.Close()
		return nil, err
	}
	return a, nil
}

// openFile opens path for appending, 0600.
func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("open audit log: %w", err)
		}
	}
	return f, nil
}

// Path is the file the log appends to.
func (a *Log) Path() string { return a.path }

// Close closes the log, once the lines AppendBehind left are on disk.
func (a *Log) Close() error {
	behind := a.caughtUp()
	a.behindWG.Wait()
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	err := errors.Join(behind, a.head.Close())
	if a.f != nil {
		err = errors.Join(err, a.f.Close())
	}
	if err != nil {
		return fmt.Errorf("close audit log: %w", err)
	}
	return nil
}

// Audit decisions.
const (
	Allowed = "allowed"
	Denied  = "denied"
	Skipped = "skipped"
	// Started is the line written before an allowed step runs: a step
	// whose line cannot be written does not run.
	Started = "started"
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
	// Principal is who asked for the step: the OS user, and for an MCP
	// client its name and version and, over HTTP, its address. Empty:
	// Principal(ctx).
	Principal string
	// Command is the resolved command line, Path the file a file tool
	// worked on.
	Command string
	Path    string
	// Approval says who approved and how (the decision's reason).
	Approval string
	// Undo is the session `agent undo` takes to put the step's changes
	// back; empty when nothing was journaled.
	Undo string
	// BytesChanged is how many bytes the step wrote to files (the new
	// contents' sizes, as the file tools report them, or for a shell
	// command the new sizes of the files it was journaled for that it
	// changed, from the journal's states before and after; a directory
	// tree's changes are not counted); nil when no file was written or
	// journaled.
	BytesChanged *int64
	// Unchecked marks a command no safety check rated (agent exec on one
	// host: the operator's own, like ssh); its risk is written
	// "unchecked" instead of Risk's level.
	Unchecked bool
}

// OutputHeadBytes is how much of a tool's output the audit log keeps.
const OutputHeadBytes = 512

// Record is the JSON shape of a line: an Entry, redacted, or (Event
// "rotate") the first line of a file that follows a rotated one.
type Record struct {
	Seq        uint64         `json:"seq"`
	Prev       string         `json:"prev"` // the SHA-256 of the line before, hex; "" first of all
	Time       string         `json:"time"`
	Event      string         `json:"event,omitempty"`         // "rotate"; "" for a step
	Previous   string         `json:"previous_file,omitempty"` // rotate: the file before
	Session    string         `json:"session,omitempty"`
	Principal  string         `json:"principal,omitempty"`
	Host       string         `json:"host,omitempty"`
	As         string         `json:"as,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Command    string         `json:"command,omitempty"`
	Path       string         `json:"path,omitempty"`
	Risk       string         `json:"risk,omitempty"`
	Reasons    []string       `json:"reasons,omitempty"`
	Decision   string         `json:"decision,omitempty"`
	By         string         `json:"by,omitempty"`
	Approval   string         `json:"approval,omitempty"`
	ExitCode   *int           `json:"exit_code,omitempty"`
	Output     string         `json:"output,omitempty"`
	DurationMS int64          `json:"duration_ms"`
	Error      string         `json:"error,omitempty"`
	Undo       string         `json:"undo,omitempty"`
	Bytes      *int64         `json:"bytes_changed,omitempty"`
}

// Append appends e as one JSON line, chained to the line before, and
// syncs it to disk. It writes even when ctx is done: an interrupted call
// belongs in the trail too. An error means the line is not in the log.
func (a *Log) Append(ctx context.Context, e Entry) error {
	if err := a.caughtUp(); err != nil {
		return err
	}
	seq, err := a.write(ctx, e)
	if err != nil {
		return err
	}
	return a.sync(seq)
}

// AppendBehind appends e like Append and returns once the line is
// written, its fsync running behind: the line of a step that ended, so
// that the fsync overlaps what comes next (the next step's session
// record, its classification) instead of preceding it. The next append
// waits for that fsync first (caughtUp), so no step starts before the
// line of the one before is on disk, as with Append; an fsync that fails
// fails every later append and Close.
func (a *Log) AppendBehind(ctx context.Context, e Entry) error {
	if err := a.caughtUp(); err != nil {
		return err
	}
	seq, err := a.writeBehind(ctx, e)
	if err != nil {
		return err
	}
	a.behindWG.Go(func() {
		if err := a.sync(seq); err != nil {
			a.fail(err)
		}
	})
	return nil
}

// AppendDeferred appends e like AppendBehind but starts no fsync: the
// next CaughtUp, Append, AppendBehind or Close puts it on disk, with every
// line deferred before it, in one fsync. For the end line of a step whose
// next commands are already running (a local batch run in turn): nothing
// waits for it but the next commands the batch starts, which wait for
// CaughtUp first.
func (a *Log) AppendDeferred(ctx context.Context, e Entry) error {
	if err := a.failed(); err != nil {
		return err
	}
	_, err := a.writeBehind(ctx, e)
	return err
}

// caughtUp returns once the lines AppendBehind left to a background fsync
// are on disk, or with that fsync's error.
func (a *Log) caughtUp() error {
	a.behindMu.Lock()
	seq, err := a.behindSeq, a.behindErr
	a.behindMu.Unlock()
	if err != nil {
		return err
	}
	if seq == 0 {
		return nil
	}
	if err := a.sync(seq); err != nil {
		a.fail(err)
		return err
	}
	return nil
}

// writeBehind writes e's line and leaves it to the next caughtUp's fsync,
// returning its number among the lines this Log wrote.
func (a *Log) writeBehind(ctx context.Context, e Entry) (uint64, error) {
	seq, err := a.write(ctx, e)
	if err != nil {
		return 0, err
	}
	a.behindMu.Lock()
	a.behindSeq = max(a.behindSeq, seq)
	a.behindMu.Unlock()
	return seq, nil
}

// failed is the error of a background fsync that failed, if one did.
func (a *Log) failed() error {
	a.behindMu.Lock()
	defer a.behindMu.Unlock()
	return a.behindErr
}

// fail records a failed fsync: every later append and Close fails with it.
func (a *Log) fail(err error) {
	a.behindMu.Lock()
	a.behindErr = cmp.Or(a.behindErr, err)
	a.behindMu.Unlock()
}

// AppendUnsynced appends e like Append but leaves it to the next
// Append's fsync (the group commit) to make it durable: the line an
// allowed step writes before it runs, whose write is what fails on a
// full disk, and whose result line follows. It returns once the line is
// written, without waiting for the lines AppendBehind left: the caller
// calls CaughtUp before the step runs, so that the fsync overlaps what
// comes between (the step's confinement). A failed fsync already known
// fails it.
func (a *Log) AppendUnsynced(ctx context.Context, e Entry) error {
	if err := a.failed(); err != nil {
		return err
	}
	_, err := a.write(ctx, e)
	return err
}

// CaughtUp returns once the lines AppendBehind left to a background
// fsync are on disk, or with that fsync's error (then every later append
// fails too).
func (a *Log) CaughtUp() error { return a.caughtUp() }

// write appends e's line and returns its number among the lines this
// Log wrote.
func (a *Log) write(ctx context.Context, e Entry) (uint64, error) {
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	reasons := make([]string, len(e.Risk.Reasons))
	for i, r := range e.Risk.Reasons {
		reasons[i] = redact.String(r)
	}
	rec := Record{
		Time:       t.UTC().Format(time.RFC3339Nano),
		Session:    e.Session,
		Principal:  cmp.Or(e.Principal, Principal(ctx)),
		Host:       e.Host,
		As:         e.As,
		Tool:       e.Tool,
		Parameters: redact.Params(e.Params),
		Command:    redact.String(e.Command),
		Path:       redact.String(e.Path),
		Risk:       riskText(e),
		Reasons:    reasons,
		Decision:   e.Decision,
		By:         e.By,
		Approval:   redact.String(e.Approval),
		ExitCode:   e.ExitCode,
		Output:     outputHead(e.Output),
		DurationMS: e.Duration.Milliseconds(),
		Error:      redact.String(e.Error),
		Undo:       e.Undo,
		Bytes:      e.BytesChanged,
	}
	if _, err := json.Marshal(rec.Parameters); err != nil {
		// Parameters of a type JSON cannot encode: keep the line, say so.
		rec.Parameters = map[string]any{"_unencodable": redact.String(fmt.Sprint(e.Params))}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.appendLocked(&rec); err != nil {
		return 0, err
	}
	a.written++
	return a.written, nil
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
	upto, f := a.written, a.f
	a.mu.Unlock()
	if err := syncFile(f); err != nil {
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

// riskText is the risk a line says: e's level, or "unchecked".
func riskText(e Entry) string {
	if e.Unchecked {
		return "unchecked"
	}
	return e.Risk.Level.String()
}
