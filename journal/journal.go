package journal

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/autoshell/agent/statedir"
)

// The undo journal of a session lives in sessions/<id>/undo/: index.jsonl,
// one JSON line per recorded file (or per restore), and <n>.bin, the
// content a file had before the session first changed it. Several hosts of
// a batch run share one session; each record names its host, blob numbers
// are claimed with O_EXCL and each index line is one O_APPEND write under
// the index's flock (see lockIndex), so journals of different hosts (even
// in different processes) record side by side and a reader never sees a
// half line.
const (
	undoDirName   = "undo"
	indexFileName = "index.jsonl"
)

// DefaultMaxBytes caps what one Record stores when the journal's
// MaxBytes is not set; it matches the default policy's write cap.
const DefaultMaxBytes = 10 << 20

// ErrAlreadyRestored is returned by Restore when the session was already
// restored on that host.
var ErrAlreadyRestored = errors.New("session already restored")

// Journal records, for one session on one host, what files looked like
// before the session changed them. It is safe for concurrent use.
type Journal struct {
	// MaxBytes caps the previous content Record stores (set it from
	// Policy.MaxWriteBytes); 0 means DefaultMaxBytes.
	MaxBytes int64

	dir, session, host string

	mu       sync.Mutex
	seen     map[string]bool // paths of this host already recorded
	restored bool
	next     int // next blob number to try
}

// Open opens the journal of session on host under stateDir (see
// StateDir), reading what it already holds. Nothing is created until the
// first Record.
func Open(stateDir, sessionID, host string) (*Journal, error) {
	if err := statedir.CheckSessionID(sessionID); err != nil {
		return nil, fmt.Errorf("open undo journal: %w", err)
	}
	j := &Journal{
		dir:     filepath.Join(statedir.Sessions(stateDir), sessionID, undoDirName),
		session: sessionID, host: host, seen: map[string]bool{}, next: 1,
	}
	maxN, seen, restored, err := hostState(filepath.Join(j.dir, indexFileName), host)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("open undo journal of session %s: %w", sessionID, err)
	default:
		j.next, j.seen, j.restored = maxN+1, seen, restored
	}
	return j, nil
}

// Session returns the journal's session id.
func (j *Journal) Session() string { return j.session }

// indexRecord is one line of index.jsonl: a recorded file, or (Restored)
// the mark that the host's files were restored.
type indexRecord struct {
	N        int       `json:"n,omitempty"`
	Host     string    `json:"host"`
	Path     string    `json:"path,omitempty"`
	Existed  bool      `json:"existed,omitempty"`
	Mode     string    `json:"mode,omitempty"` // octal mode & 07777
	Size     int64     `json:"size,omitempty"`
	SHA256   string    `json:"sha256,omitempty"`
	Time     time.Time `json:"time"`
	Restored bool      `json:"restored,omitempty"`
	// Changed marks a change record (see Journal.Changed): NewSHA256 is
	// the content Path got from the session.
	Changed   bool   `json:"changed,omitempty"`
	NewSHA256 string `json:"new_sha256,omitempty"`
	// As is the user the change was made as through become (sudo): the
	// restore is made as that user too. "" for the login user.
	As string `json:"as,omitempty"`
	// Dir marks a directory the session created (a shell command's
	// mkdir): Restore removes it again if it is empty.
	Dir bool `json:"dir,omitempty"`
	// Tree marks a directory tree saved whole (RecordTree): N is its
	// manifest's blob, SHA256 its state's digest, Size its files' bytes.
	Tree bool `json:"tree,omitempty"`
	// PathB64 is Path base64-encoded when it is not UTF-8 (a file
	// named with other bytes): JSON would turn them into U+FFFD. Path then
	// holds nothing (appendIndex, parseIndex).
	PathB64 string `json:"path_b64,omitempty"`
	// Owner is an existing file's owner and group before the change,
	// "UID:GID", when the change may have changed them (chown, chgrp):
	// Restore puts them back. A tree's owners are in its manifest.
	Owner string `json:"owner,omitempty"`
}

// Record stores the state path had before a change: prev and mode when it
// existed, or its absence. It returns only once the record is on disk, so
// the caller makes the change only after it can be undone; an error means
// the change must not be made. Only the first record of a path counts
// (undo restores the state before the session), so later ones store
// nothing. Content above MaxBytes is refused with an error wrapping
// ErrTooLarge. mode keeps its permission, setuid, setgid and sticky bits
// (see UnixMode).
func (j *Journal) Record(ctx context.Context, file string, prev []byte, existed bool, mode fs.FileMode) error {
	return j.RecordAs(ctx, file, prev, existed, mode, "")
}

// RecordAs is Record for a change made as user as through become (sudo):
// Restore puts the file back as that user (RestoreOptions.As).
func (j *Journal) RecordAs(ctx context.Context, file string, prev []byte, existed bool, mode fs.FileMode, as string) error {
	return j.RecordOwned(ctx, file, prev, existed, mode, "", as)
}

// RecordOwned is RecordAs that also keeps the file's owner and group
// ("UID:GID", see Owner; "" keeps none), which Restore puts back.
func (j *Journal) RecordOwned(ctx context.Context, file string, prev []byte, existed bool, mode fs.FileMode, owner, as string) error {
	if _, _, err := ParseOwner(owner); owner != "" && (err != nil || !existed) {
		return fmt.Errorf("undo journal: record %s: bad owner %q for a file that existed=%v", file, owner, existed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("undo journal: record %s: %w", file, err)
	}
	if err := checkJournalPath(file); err != nil {
		return fmt.Errorf("undo journal: record: %w", err)
	}
	limit := j.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if existed && int64(len(prev)) > limit {
		return fmt.Errorf("undo journal: %s has %d bytes, above the %d-byte cap; refusing a change that could not be undone: %w",
			file, len(prev), limit, ErrTooLarge)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restored {
		return fmt.Errorf("undo journal: session %s on %s was already restored; start a new session", j.session, j.host)
	}
	if j.seen[file] {
		return nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("undo journal: %w", err)
	}
	rec := indexRecord{Host: j.host, Path: file, Existed: existed, Time: time.Now().UTC(), As: as, Owner: owner}
	if existed {
		sum := sha256.Sum256(prev)
		rec.Mode = fmt.Sprintf("%04o", UnixMode(mode))
		rec.Size = int64(len(prev))
		rec.SHA256 = hex.EncodeToString(sum[:])
		n, err := j.writeBlob(prev)
		if err != nil {
			return fmt.Errorf("undo journal: save %s: %w", file, err)
		}
		rec.N = n
	}
	if err := j.appendIndex(rec); err != nil {
		return fmt.Errorf("undo journal: record %s: %w", file, err)
	}
	j.seen[file] = true
	return nil
}

// RecordDir records that dir did not exist before a change that creates
// it as a directory (mkdir), made as user as ("" for the login user):
// Restore removes it again, and only while it is empty, so that nothing
// put in it later is lost. Like Record, it returns once the record is on
// disk, and only a path's first record counts.
func (j *Journal) RecordDir(ctx context.Context, dir, as string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("undo journal: record %s: %w", dir, err)
	}
	if err := checkJournalPath(dir); err != nil {
		return fmt.Errorf("undo journal: record: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restored {
		return fmt.Errorf("undo journal: session %s on %s was already restored; start a new session", j.session, j.host)
	}
	if j.seen[dir] {
		return nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("undo journal: %w", err)
	}
	rec := indexRecord{Host: j.host, Path: dir, Dir: true, Time: time.Now().UTC(), As: as}
	if err := j.appendIndex(rec); err != nil {
		return fmt.Errorf("undo journal: record %s: %w", dir, err)
	}
	j.seen[dir] = true
	return nil
}

// Absent is what Changed is given for a file the session's change
// removed (a shell command's rm, mv): Restore then expects it missing.
const Absent = "absent"

// Unreadable is what Changed is given for a path the session's change
// left unreadable to the user (chmod 000 f, chmod -R 0 DIR after an
// earlier change of it in the session): Restore makes it traversable
// again and puts it back without comparing (what it held was not read).
const Unreadable = "unreadable"

// Changed records the content a change of the session gave file (its
// SHA-256, hex, or Absent, or TreeState when it is a directory), after the change succeeded: Restore then refuses to
// overwrite a file whose content is neither that nor its content before
// the session, since someone changed it later. Call it after every
// successful change of a file recorded with Record; the last call counts.
func (j *Journal) Changed(ctx context.Context, file, newSHA256 string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("undo journal: changed %s: %w", file, err)
	}
	if !validState(newSHA256) {
		return fmt.Errorf("undo journal: changed %s: bad sha256 %q", file, newSHA256)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restored {
		return fmt.Errorf("undo journal: session %s on %s was already restored; start a new session", j.session, j.host)
	}
	if !j.seen[file] {
		return fmt.Errorf("undo journal: changed %s: no record of its previous state", file)
	}
	rec := indexRecord{Host: j.host, Path: file, Time: time.Now().UTC(), Changed: true, NewSHA256: newSHA256}
	if err := j.appendIndex(rec); err != nil {
		return fmt.Errorf("undo journal: changed %s: %w", file, err)
	}
	return nil
}

// writeBlob stores content in the first free <n>.bin and syncs it.
func (j *Journal) writeBlob(content []byte) (int, error) {
	for {
		n := j.next
		name := filepath.Join(j.dir, strconv.Itoa(n)+".bin")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			j.next++
			continue
		}
		if err != nil {
			return 0, err
		}
		j.next++
		_, err = f.Write(content)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = syncDir(j.dir)
		}
		if err != nil {
			os.Remove(name)
			return 0, err
		}
		return n, nil
	}
}

// appendIndex appends one line to the index and syncs it.
func (j *Journal) appendIndex(rec indexRecord) error {
	if !utf8.ValidString(rec.Path) {
		rec.Path, rec.PathB64 = "", base64.StdEncoding.EncodeToString([]byte(rec.Path))
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	name := filepath.Join(j.dir, indexFileName)
	_, statErr := os.Stat(name)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	// Under LOCK_EX for the write only (see lockIndex); the sync after.
	err = lockIndex(f, syscall.LOCK_EX)
	if err == nil {
		err = cutTornTail(f)
		if err == nil {
			_, err = f.Write(append(b, '\n'))
		}
		unlockIndex(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && statErr != nil {
		err = syncDir(j.dir)
		if err == nil {
			err = syncDir(filepath.Dir(j.dir))
		}
	}
	return err
}

// SessionInfo describes one session's undo journal.
type SessionInfo struct {
	ID      string
	Started time.Time // time of the first record
	Hosts   []string  // sorted
	Files   int       // distinct (host, path) pairs recorded
	// Restored: every host's files were restored.
	Restored bool
	// Err is set when the journal cannot be read; the other fields are
	// then empty.
	Err error
}

// ListSessions returns the sessions under stateDir that recorded file
// changes, newest first.
func ListSessions(stateDir string) ([]SessionInfo, error) {
	dir := statedir.Sessions(stateDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []SessionInfo
	for _, e := range ents {
		if !e.IsDir() || statedir.CheckSessionID(e.Name()) != nil {
			continue
		}
		recs, err := readIndex(filepath.Join(dir, e.Name(), undoDirName, indexFileName))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		out = append(out, summarize(e.Name(), recs, err))
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return cmp.Compare(b.ID, a.ID) })
	return out, nil
}

func summarize(id string, recs []indexRecord, err error) SessionInfo {
	info := SessionInfo{ID: id, Err: err}
	if err != nil {
		return info
	}
	files := map[[2]string]bool{}
	restored := map[string]bool{}
	for _, r := range recs {
		if info.Started.IsZero() || r.Time.Before(info.Started) {
			info.Started = r.Time
		}
		if !slices.Contains(info.Hosts, r.Host) {
			info.Hosts = append(info.Hosts, r.Host)
		}
		if r.Restored {
			restored[r.Host] = true
		} else {
			files[[2]string{r.Host, r.Path}] = true
		}
	}
	slices.Sort(info.Hosts)
	info.Files = len(files)
	info.Restored = len(info.Hosts) > 0
	for _, h := range info.Hosts {
		info.Restored = info.Restored && restored[h]
	}
	return info
}

// readIndex reads and checks an index file: its whole lines (see
// lockIndex).
func readIndex(name string) ([]indexRecord, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readIndexFrom(f, 0)
	if err != nil {
		return nil, err
	}
	recs, err := parseIndex(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return recs, nil
}

// maxIndexLine bounds one index line; a path is at most a few KiB.
const maxIndexLine = 1 << 20

// parseIndex parses index lines, naming the first bad one; blank lines
// are skipped.
func parseIndex(r io.Reader) ([]indexRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxIndexLine)
	var recs []indexRecord
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec indexRecord
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: trailing data after the record", line)
		}
		if rec.PathB64 != "" {
			p, err := base64.StdEncoding.DecodeString(rec.PathB64)
			if err != nil || rec.Path != "" || utf8.Valid(p) {
				return nil, fmt.Errorf("line %d: bad path_b64 (a path that is not UTF-8, base64, and no path beside it)", line)
			}
			rec.Path, rec.PathB64 = string(p), ""
		}
		if err := rec.check(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return recs, nil
}

func (r indexRecord) check() error {
	if r.As != "" && (r.Restored || r.Changed || !userName(r.As)) {
		return fmt.Errorf("%s: bad become user %q", r.Path, r.As)
	}
	if r.Restored {
		if r.Path != "" || r.N != 0 || r.Changed {
			return errors.New("restore mark with a file")
		}
		return nil
	}
	if err := checkJournalPath(r.Path); err != nil {
		return err
	}
	if r.Dir && (r.Changed || r.Existed || r.N != 0 || r.SHA256 != "" || r.Mode != "" || r.Size != 0) {
		return fmt.Errorf("%s: a created directory's record with file fields", r.Path)
	}
	if _, _, err := ParseOwner(r.Owner); r.Owner != "" && (err != nil || r.Tree || r.Dir || r.Changed || !r.Existed) {
		return fmt.Errorf("%s: bad owner %q, or an owner outside a saved file's record", r.Path, r.Owner)
	}
	if r.Tree && (r.Dir || r.Changed || !r.Existed || r.Mode != "" || r.N <= 0 || r.Size < 0 || !validState(TreeStatePrefix+r.SHA256)) {
		return fmt.Errorf("%s: a tree record without its manifest or digest", r.Path)
	}
	if r.Tree {
		return nil
	}
	if r.Changed {
		if r.N != 0 || r.Existed || r.SHA256 != "" || r.Mode != "" {
			return fmt.Errorf("%s: change record with saved content", r.Path)
		}
		if !validState(r.NewSHA256) {
			return fmt.Errorf("%s: bad new_sha256 %q", r.Path, r.NewSHA256)
		}
		return nil
	}
	if r.NewSHA256 != "" {
		return fmt.Errorf("%s: new_sha256 outside a change record", r.Path)
	}
	if !r.Existed {
		if r.N != 0 || r.SHA256 != "" {
			return fmt.Errorf("%s: saved content for a file that did not exist", r.Path)
		}
		return nil
	}
	if r.N <= 0 {
		return fmt.Errorf("%s: missing blob number", r.Path)
	}
	if m, err := strconv.ParseUint(r.Mode, 8, 32); err != nil || m > 0o7777 {
		return fmt.Errorf("%s: bad mode %q", r.Path, r.Mode)
	}
	if r.Size < 0 {
		return fmt.Errorf("%s: negative size", r.Path)
	}
	if b, err := hex.DecodeString(r.SHA256); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("%s: bad sha256 %q", r.Path, r.SHA256)
	}
	return nil
}

// checkJournalPath accepts absolute, clean paths only: what ResolvePath
// returns and nothing a tampered index could use to surprise Restore.
func checkJournalPath(p string) error {
	if p == "" || !path.IsAbs(p) || path.Clean(p) != p {
		return fmt.Errorf("path %q is not absolute and clean", p)
	}
	for i := 0; i < len(p); i++ {
		if p[i] == 0 {
			return fmt.Errorf("path %q contains a NUL byte", p)
		}
	}
	return nil
}

// userName accepts a user name or #UID as sudo -u takes them.
func userName(u string) bool {
	if len(u) == 0 || len(u) > 65 || u[0] == '-' {
		return false
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '$' || c == '#' && i == 0) {
			return false
		}
	}
	return true
}

// validState accepts a file's state: a hex SHA-256, Absent, a special
// file's kind ("special:fifo"), or a tree's "tree:" and hex SHA-256.
func validState(s string) bool {
	if s == Absent || s == TooLarge || s == Unreadable {
		return true
	}
	if _, ok := LargeSize(s); ok {
		return true
	}
	if k, ok := strings.CutPrefix(s, SpecialPrefix); ok {
		return slices.Contains(specialKinds, k)
	}
	b, err := hex.DecodeString(strings.TrimPrefix(s, TreeStatePrefix))
	return err == nil && len(b) == sha256.Size
}
