package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/autoshell/agent/statedir"
)

// memFiles is an in-memory host: FileRestorer from function fields over a map.
type memFiles struct {
	mu    sync.Mutex
	files map[string][]byte
	modes map[string]fs.FileMode
	dirs  map[string]bool
}

func newMemFiles() *memFiles {
	return &memFiles{files: map[string][]byte{}, modes: map[string]fs.FileMode{}, dirs: map[string]bool{}}
}

// restorerFunc builds a FileRestorer from function fields.
type restorerFunc struct {
	write  func(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error)
	remove func(ctx context.Context, path string) error
	read   func(ctx context.Context, path string, w io.Writer) (int64, error)
	chmod  func(ctx context.Context, path string, mode fs.FileMode) error
	rmdir  func(ctx context.Context, path string) error
}

func (f restorerFunc) RemoveDir(ctx context.Context, path string) error { return f.rmdir(ctx, path) }

func (f restorerFunc) WriteFile(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error) {
	return f.write(ctx, path, r, perm)
}
func (f restorerFunc) Remove(ctx context.Context, path string) error { return f.remove(ctx, path) }
func (f restorerFunc) ReadFile(ctx context.Context, path string, w io.Writer) (int64, error) {
	return f.read(ctx, path, w)
}
func (f restorerFunc) Chmod(ctx context.Context, path string, mode fs.FileMode) error {
	return f.chmod(ctx, path, mode)
}

// restorer behaves like a transport: WriteFile keeps an existing file's
// mode whatever perm says and gives a new one perm's permission bits only
// (no setuid), so only Chmod can put a recorded mode back.
func (m *memFiles) restorer() FileRestorer {
	return restorerFunc{
		write: func(_ context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error) {
			b, err := io.ReadAll(r)
			if err != nil {
				return 0, err
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			if _, ok := m.files[path]; !ok {
				m.modes[path] = perm.Perm()
			}
			m.files[path] = b
			return int64(len(b)), nil
		},
		read: func(_ context.Context, path string, w io.Writer) (int64, error) {
			m.mu.Lock()
			b, ok := m.files[path]
			m.mu.Unlock()
			if !ok {
				return 0, &fs.PathError{Op: "read", Path: path, Err: fs.ErrNotExist}
			}
			n, err := w.Write(b)
			return int64(n), err
		},
		chmod: func(_ context.Context, path string, mode fs.FileMode) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			if _, ok := m.files[path]; !ok {
				return &fs.PathError{Op: "chmod", Path: path, Err: fs.ErrNotExist}
			}
			m.modes[path] = mode
			return nil
		},
		remove: func(_ context.Context, path string) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			delete(m.files, path)
			delete(m.modes, path)
			return nil
		},
		rmdir: func(_ context.Context, path string) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			for p := range m.files {
				if strings.HasPrefix(p, path+"/") {
					return &fs.PathError{Op: "rmdir", Path: path, Err: errors.New("directory not empty")}
				}
			}
			delete(m.dirs, path)
			return nil
		},
	}
}

// change records path in j, changes it and records the new content, as
// the runner does.
func (m *memFiles) change(t *testing.T, j *Journal, path string, content []byte) {
	t.Helper()
	m.mu.Lock()
	prev, existed := m.files[path]
	mode := m.modes[path]
	m.mu.Unlock()
	if err := j.Record(context.Background(), path, prev, existed, mode); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.files[path] = content
	if !existed {
		m.modes[path] = 0o644
	}
	m.mu.Unlock()
	sum := sha256.Sum256(content)
	if err := j.Changed(context.Background(), path, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
}

func TestJournalRestore(t *testing.T) {
	state := t.TempDir()
	id := "20261121T090102Z-ab12cd"
	h := newMemFiles()
	binary := []byte{0, 1, 2, 0xff, '\n', '\r', 'x'}
	h.files["/srv/a.sh"], h.modes["/srv/a.sh"] = []byte("echo 1\n"), 0o755
	h.files["/srv/bin"], h.modes["/srv/bin"] = binary, 0o600
	h.files["/srv/empty"], h.modes["/srv/empty"] = []byte{}, 0o640
	before := map[string][]byte{"/srv/a.sh": []byte("echo 1\n"), "/srv/bin": binary, "/srv/empty": {}}

	j, err := Open(state, id, "vub")
	if err != nil {
		t.Fatal(err)
	}
	h.change(t, j, "/srv/a.sh", []byte("echo 2\n"))
	h.change(t, j, "/srv/new.conf", []byte("x=1\n"))
	h.change(t, j, "/srv/a.sh", []byte("echo 3\n")) // second edit: first record wins
	h.change(t, j, "/srv/new.conf", []byte("x=2\n"))
	h.change(t, j, "/srv/bin", []byte("replaced"))
	h.change(t, j, "/srv/empty", []byte("now full"))

	// Blobs and index are private and hold only first records.
	undo := filepath.Join(state, "sessions", id, "undo")
	blobs, _ := filepath.Glob(filepath.Join(undo, "*.bin"))
	if len(blobs) != 3 {
		t.Errorf("%d blobs, want 3", len(blobs))
	}
	if fi, err := os.Stat(filepath.Join(undo, "index.jsonl")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("index: %v %v", fi, err)
	}

	sessions, err := ListSessions(state)
	if err != nil || len(sessions) != 1 || sessions[0].ID != id || sessions[0].Files != 4 ||
		!reflect.DeepEqual(sessions[0].Hosts, []string{"vub"}) || sessions[0].Restored {
		t.Fatalf("ListSessions = %+v, %v", sessions, err)
	}

	// A later run (a new process) restores.
	j2, err := Open(state, id, "vub")
	if err != nil {
		t.Fatal(err)
	}
	actions, err := j2.Restore(context.Background(), h.restorer())
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, a := range actions {
		said = append(said, a.String())
	}
	want := []string{"restored /srv/empty (0 bytes)", "restored /srv/bin (7 bytes)", "removed /srv/new.conf (did not exist before)", "restored /srv/a.sh (7 bytes)"}
	if !reflect.DeepEqual(said, want) {
		t.Errorf("actions:\n got %q\nwant %q", said, want)
	}
	if !reflect.DeepEqual(h.files, before) {
		t.Errorf("files after restore: %q", h.files)
	}
	if h.modes["/srv/a.sh"] != 0o755 || h.modes["/srv/bin"] != 0o600 || h.modes["/srv/empty"] != 0o640 {
		t.Errorf("modes: %v", h.modes)
	}

	// Twice: says so, does nothing, also from a fresh journal.
	for _, jj := range []*Journal{j2, mustOpen(t, state, id, "vub")} {
		h.files["/srv/a.sh"] = []byte("changed again")
		if acts, err := jj.Restore(context.Background(), h.restorer()); !errors.Is(err, ErrAlreadyRestored) || acts != nil {
			t.Errorf("second restore: %v, %v", acts, err)
		}
		if string(h.files["/srv/a.sh"]) != "changed again" {
			t.Error("second restore changed a file")
		}
	}
	if s, _ := ListSessions(state); !s[0].Restored {
		t.Errorf("not marked restored: %+v", s[0])
	}
	if err := j2.Record(context.Background(), "/srv/z", nil, false, 0); err == nil {
		t.Error("Record after restore succeeded")
	}
}

func TestJournalHosts(t *testing.T) {
	state := t.TempDir()
	id := statedir.NewSessionID()
	hosts := map[string]*memFiles{"web01": newMemFiles(), "web02": newMemFiles()}
	var wg sync.WaitGroup
	for name, h := range hosts {
		h.files["/etc/app.conf"] = []byte("host " + name)
		j := mustOpen(t, state, id, name)
		wg.Go(func() {
			for i := range 5 {
				h.change(t, j, "/etc/app.conf", []byte("v2"))
				h.change(t, j, "/tmp/f"+string(rune('0'+i)), []byte("new"))
			}
		})
	}
	wg.Wait()
	s, err := ListSessions(state)
	if err != nil || len(s) != 1 || s[0].Files != 12 || len(s[0].Hosts) != 2 {
		t.Fatalf("ListSessions = %+v %v", s, err)
	}
	for name, h := range hosts {
		acts, err := mustOpen(t, state, id, name).Restore(context.Background(), h.restorer())
		if err != nil || len(acts) != 6 {
			t.Fatalf("%s: %v %v", name, acts, err)
		}
		if string(h.files["/etc/app.conf"]) != "host "+name || len(h.files) != 1 {
			t.Errorf("%s: %q", name, h.files)
		}
	}
	if s, _ := ListSessions(state); !s[0].Restored {
		t.Errorf("all hosts restored but session not: %+v", s[0])
	}
}

func TestJournalLimitsAndErrors(t *testing.T) {
	state := t.TempDir()
	j := mustOpen(t, state, "s1", "h")
	j.MaxBytes = 10
	if err := j.Record(context.Background(), "/big", make([]byte, 11), true, 0o644); !errors.Is(err, ErrTooLarge) ||
		!strings.Contains(err.Error(), "could not be undone") {
		t.Errorf("big file: %v", err)
	}
	if err := j.Record(context.Background(), "/big", make([]byte, 11), false, 0); err != nil {
		t.Errorf("new file is not capped: %v", err)
	}
	for _, p := range []string{"", "rel/x", "/a/../b", "/a/", "/a\x00b"} {
		if err := j.Record(context.Background(), p, nil, false, 0); err == nil {
			t.Errorf("Record(%q) succeeded", p)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := j.Record(ctx, "/c", nil, false, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Record: %v", err)
	}
	for _, id := range []string{"", "../x", "a/b", ".hidden", strings.Repeat("a", 200)} {
		if _, err := Open(state, id, "h"); !errors.Is(err, statedir.ErrBadSessionID) {
			t.Errorf("Open(%q): %v", id, err)
		}
	}
	// Nothing recorded: nothing to restore, nothing listed.
	e := mustOpen(t, state, "empty", "h")
	if acts, err := e.Restore(context.Background(), newMemFiles().restorer()); acts != nil || err != nil {
		t.Errorf("empty restore: %v %v", acts, err)
	}
	// A failing restorer: error per file, others restored, not marked.
	h := newMemFiles()
	h.files["/x"] = []byte("old")
	k := mustOpen(t, state, "s2", "h")
	h.change(t, k, "/x", []byte("new"))
	h.change(t, k, "/y", []byte("new"))
	r := h.restorer().(restorerFunc)
	r.remove = func(context.Context, string) error { return errors.New("permission denied") }
	acts, err := k.Restore(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "remove /y: permission denied") || len(acts) != 1 || string(h.files["/x"]) != "old" {
		t.Errorf("failing restore: %v %v", acts, err)
	}
	if _, err := k.Restore(context.Background(), h.restorer()); err != nil {
		t.Errorf("retry after failure: %v", err)
	}
}

func TestJournalCorrupt(t *testing.T) {
	state := t.TempDir()
	h := newMemFiles()
	h.files["/x"] = []byte("old")
	j := mustOpen(t, state, "s1", "h")
	h.change(t, j, "/x", []byte("new"))
	index := filepath.Join(state, "sessions", "s1", "undo", "index.jsonl")
	good, _ := os.ReadFile(index)

	os.WriteFile(index, append(append([]byte{}, good...), "{\"host\":\"h\",\"path\":\n"...), 0o600)
	if _, err := Open(state, "s1", "h"); err == nil || !strings.Contains(err.Error(), "index.jsonl: line 3:") {
		t.Errorf("corrupt line: %v", err)
	}
	if s, err := ListSessions(state); err != nil || len(s) != 1 || s[0].Err == nil {
		t.Errorf("ListSessions with corrupt index: %+v %v", s, err)
	}

	// A tampered blob is caught by its checksum.
	os.WriteFile(index, good, 0o600)
	os.WriteFile(filepath.Join(state, "sessions", "s1", "undo", "1.bin"), []byte("evil"), 0o600)
	if _, err := mustOpen(t, state, "s1", "h").Restore(context.Background(), h.restorer()); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("tampered blob: %v", err)
	}
}

func TestParseIndex(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	tests := []struct{ in, err string }{
		{`{"n":1,"host":"h","path":"/a","existed":true,"mode":"0644","size":1,"sha256":"` + sum + `","time":"2026-01-01T00:00:00Z"}` + "\n\n" +
			`{"host":"h","path":"/b","time":"2026-01-01T00:00:00Z"}` + "\n" + `{"host":"h","restored":true,"time":"2026-01-01T00:00:00Z"}`, ""},
		{`{"host":"h","path":"a"}`, "line 1: path \"a\" is not absolute"},
		{"\n" + `{"host":"h","path":"/a","existed":true,"mode":"0644","sha256":"` + sum + `"}`, "line 2: /a: missing blob number"},
		{`{"n":1,"host":"h","path":"/a","existed":true,"mode":"999","sha256":"` + sum + `"}`, "bad mode"},
		{`{"n":1,"host":"h","path":"/a","existed":true,"mode":"0644","sha256":"xyz"}`, "bad sha256"},
		{`{"n":2,"host":"h","path":"/a"}`, "did not exist"},
		{`{"host":"h","path":"/a","extra":1}`, "unknown field"},
		{`{"host":"h","path":"/a"} {}`, "trailing data"},
		{`{"host":"h","restored":true,"path":"/a"}`, "restore mark"},
		{`{"host":"h","path":"/a","changed":true,"new_sha256":"` + sum + `","time":"2026-01-01T00:00:00Z"}`, ""},
		{`{"n":1,"host":"h","path":"/a","existed":true,"mode":"4750","size":1,"sha256":"` + sum + `"}`, ""},
		{`{"n":1,"host":"h","path":"/a","existed":true,"mode":"17777","sha256":"` + sum + `"}`, "bad mode"},
		{`{"host":"h","path":"/a","changed":true,"new_sha256":"xyz"}`, "bad new_sha256"},
		{`{"n":3,"host":"h","path":"/a","changed":true,"new_sha256":"` + sum + `"}`, "change record with saved content"},
		{`{"host":"h","path":"/a","new_sha256":"` + sum + `"}`, "outside a change record"},
		{`[1]`, "line 1:"},
	}
	for _, tc := range tests {
		_, err := parseIndex(strings.NewReader(tc.in))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseIndex(%.40q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}

func FuzzJournalIndex(f *testing.F) {
	f.Add([]byte(`{"n":1,"host":"h","path":"/a","existed":true,"mode":"0644","size":1,"sha256":"` + strings.Repeat("0", 64) + `","time":"2026-01-01T00:00:00Z"}` + "\n"))
	f.Add([]byte(`{"host":"h","restored":true}` + "\n{\n"))
	f.Add([]byte("\xff\n\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := parseIndex(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, r := range recs {
			if !r.Restored && checkJournalPath(r.Path) != nil {
				t.Fatalf("accepted bad path %q", r.Path)
			}
		}
		_ = summarize("s", recs, nil)
	})
}

func mustOpen(t *testing.T, state, id, host string) *Journal {
	t.Helper()
	j, err := Open(state, id, host)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestJournalModes(t *testing.T) {
	state := t.TempDir()
	h := newMemFiles()
	suid := fs.FileMode(0o750) | fs.ModeSetuid
	sgidSticky := fs.FileMode(0o775) | fs.ModeSetgid | fs.ModeSticky
	h.files["/srv/run.sh"], h.modes["/srv/run.sh"] = []byte("v1"), suid
	h.files["/srv/shared"], h.modes["/srv/shared"] = []byte("s1"), sgidSticky
	h.files["/srv/gone"], h.modes["/srv/gone"] = []byte("g1"), fs.FileMode(0o700)|fs.ModeSetuid
	j := mustOpen(t, state, "s1", "h")
	h.change(t, j, "/srv/run.sh", []byte("v2"))
	h.change(t, j, "/srv/shared", []byte("s2"))
	h.change(t, j, "/srv/gone", []byte("g2"))
	index, _ := os.ReadFile(filepath.Join(state, "sessions", "s1", "undo", "index.jsonl"))
	for _, m := range []string{`"mode":"4750"`, `"mode":"3775"`, `"mode":"4700"`} {
		if !bytes.Contains(index, []byte(m)) {
			t.Errorf("index lacks %s:\n%s", m, index)
		}
	}
	// Modes changed since (a chmod does not change the content), one file
	// deleted: a forced undo writes it anew, which drops setuid.
	h.modes["/srv/run.sh"], h.modes["/srv/shared"] = 0o644, 0o644
	delete(h.files, "/srv/gone")
	delete(h.modes, "/srv/gone")
	if _, err := mustOpen(t, state, "s1", "h").RestoreWith(context.Background(), h.restorer(), RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"/srv/run.sh": suid, "/srv/shared": sgidSticky, "/srv/gone": fs.FileMode(0o700) | fs.ModeSetuid}
	if !reflect.DeepEqual(h.modes, want) {
		t.Errorf("modes after restore: %v, want %v", h.modes, want)
	}
	for _, m := range []fs.FileMode{suid, sgidSticky, 0o644, fs.FileMode(0o4755)} {
		if got, u := FileModeOf(UnixMode(m)), UnixMode(m); u > 0o7777 || (m&0o7000 == 0 && got != m) {
			t.Errorf("UnixMode(%v) = %o, back %v", m, u, got)
		}
	}
}

func TestJournalChangedSince(t *testing.T) {
	state := t.TempDir()
	h := newMemFiles()
	h.files["/etc/a"], h.modes["/etc/a"] = []byte("v1"), 0o644
	h.files["/etc/b"], h.modes["/etc/b"] = []byte("b1"), 0o644
	h.files["/etc/c"], h.modes["/etc/c"] = []byte("c1"), 0o644
	j := mustOpen(t, state, "s1", "h")
	h.change(t, j, "/etc/a", []byte("v2"))
	h.change(t, j, "/etc/b", []byte("b2"))
	h.change(t, j, "/etc/c", []byte("c2"))
	h.change(t, j, "/etc/new", []byte("n2"))
	// Someone else writes /etc/a and the new file, and deletes /etc/c.
	h.files["/etc/a"], h.files["/etc/new"] = []byte("v3"), []byte("n3")
	delete(h.files, "/etc/c")

	acts, err := mustOpen(t, state, "s1", "h").Restore(context.Background(), h.restorer())
	if !errors.Is(err, ErrChangedSince) || len(acts) != 1 || acts[0].Path != "/etc/b" {
		t.Fatalf("Restore = %v, %v", acts, err)
	}
	for _, p := range []string{"/etc/a", "/etc/c", "/etc/new"} {
		if !strings.Contains(err.Error(), "skipped "+p+": changed since session s1 (use --force to overwrite)") {
			t.Errorf("error does not skip %s: %v", p, err)
		}
	}
	if string(h.files["/etc/a"]) != "v3" || string(h.files["/etc/new"]) != "n3" || string(h.files["/etc/b"]) != "b1" {
		t.Errorf("files: %q", h.files)
	}
	if s, _ := ListSessions(state); s[0].Restored {
		t.Error("marked restored with files skipped")
	}
	// --force: the later changes are overwritten; /etc/b, already back,
	// is not a conflict.
	j = mustOpen(t, state, "s1", "h")
	acts, err = j.RestoreWith(context.Background(), h.restorer(), RestoreOptions{Force: true})
	if err != nil || len(acts) != 4 {
		t.Fatalf("forced Restore = %v, %v", acts, err)
	}
	want := map[string][]byte{"/etc/a": []byte("v1"), "/etc/b": []byte("b1"), "/etc/c": []byte("c1")}
	if !reflect.DeepEqual(h.files, want) {
		t.Errorf("files after forced restore: %q", h.files)
	}
	if err := j.Changed(context.Background(), "/etc/a", strings.Repeat("0", 64)); err == nil {
		t.Error("Changed after restore succeeded")
	}
	k := mustOpen(t, state, "s2", "h")
	if err := k.Changed(context.Background(), "/etc/zz", strings.Repeat("0", 64)); err == nil {
		t.Error("Changed of an unrecorded file succeeded")
	}
	if err := k.Changed(context.Background(), "/etc/zz", "nothex"); err == nil {
		t.Error("Changed with a bad hash succeeded")
	}
}
