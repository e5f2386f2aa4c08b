package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// TestEditBlowUp: a short frequent pattern replaced by a long text fails on
// the computed size, before any memory is taken (this allocated 4.3 GB).
func TestEditBlowUp(t *testing.T) {
	content := strings.Repeat("a", 2<<20)
	repl := strings.Repeat("x", 4<<10)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	got, n, err := EditLimit(content, "a", repl, false, -1, 10<<20)
	var ee *EditError
	if !errors.As(err, &ee) || got != "" || n != 0 ||
		!strings.Contains(err.Error(), "the edit would make the file 8589934592 bytes, over the limit 10485760") {
		t.Fatalf("got %d bytes, %d, %v", len(got), n, err)
	}
	// A regex template repeating a group of the whole file.
	_, _, err = Edit(content, `(?s)(.*)`, strings.Repeat("$1", 2<<10), true, 0)
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "over the limit 1073741824") {
		t.Fatalf("regex: %v", err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<20 { // the bug allocated 4 GB
		t.Errorf("the refused edits allocated %d MiB", n>>20)
	}
	// Within the limit it works, exactly sized.
	if got, n, err := EditLimit("abab", "(a)", "$1$1", true, -1, 6); err != nil || got != "aabaab" || n != 2 {
		t.Fatalf("%q %d %v", got, n, err)
	}
	if _, _, err := EditLimit("abab", "(a)", "$1$1", true, -1, 5); err == nil {
		t.Fatal("6 bytes over a limit of 5")
	}
	// Through edit_file, the policy's MaxWriteBytes is the limit.
	lt := newLocal(t)
	p := filepath.Join(t.TempDir(), "big.txt")
	writeFile(t, p, strings.Repeat("a", 64<<10), 0o644)
	out, err := NewEditFile(testPolicy()).Run(ctxT(t), lt, raw(t, map[string]any{"file_path": p, "search_pattern": "a", "replacement": repl, "count": -1}))
	if err != nil || !out.IsError || !strings.Contains(out.Observation, "over the limit 1048576") {
		t.Fatalf("%+v %v", out, err)
	}
	if readFile(t, p) != strings.Repeat("a", 64<<10) {
		t.Fatal("file changed")
	}
}

func newLocal(t *testing.T) transport.Transport {
	t.Helper()
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Close() })
	return lt
}

// TestExpectedContent: Run applies the change only while the file is what
// the approved Preview saw.
func TestExpectedContent(t *testing.T) {
	lt := newLocal(t)
	dir := t.TempDir()
	reg := Default(testPolicy())
	src := filepath.Join(t.TempDir(), "src")
	writeFile(t, src, "uploaded\n", 0o644)
	cases := []struct {
		tool   string
		params func(p string) map[string]any
	}{
		{WriteFileName, func(p string) map[string]any { return map[string]any{"file_path": p, "content": "new\n"} }},
		{EditFileName, func(p string) map[string]any {
			return map[string]any{"file_path": p, "search_pattern": "old", "replacement": "new"}
		}},
		{UploadFileName, func(p string) map[string]any { return map[string]any{"local_path": src, "remote_path": p} }},
	}
	for _, c := range cases {
		for _, tc := range []struct {
			name            string
			initial, meddle string // "" initial: no file; "" meddle: leave it
		}{
			{"match", "old\n", ""},
			{"mismatch", "old\n", "old\nold by someone else\n"},
			{"new file", "", ""},
			{"created meanwhile", "", "old\n"},
			{"removed meanwhile", "old\n", "-"},
		} {
			if c.tool == EditFileName && tc.initial == "" {
				continue
			}
			t.Run(c.tool+"/"+tc.name, func(t *testing.T) {
				p := filepath.Join(dir, c.tool+"-"+strings.ReplaceAll(tc.name, " ", "_"))
				if tc.initial != "" {
					writeFile(t, p, tc.initial, 0o644)
				}
				tl, _ := reg.Lookup(c.tool)
				prev, err := tl.(Previewer).Preview(ctxT(t), lt, raw(t, c.params(p)))
				if err != nil || prev.IsError || len(prev.FilesChanged) != 1 {
					t.Fatalf("preview %+v %v", prev, err)
				}
				fc := prev.FilesChanged[0]
				want := AbsentSHA
				if tc.initial != "" {
					want = sha([]byte(tc.initial))
				}
				if fc.Path != p || fc.OldSHA256 != want || fc.Existed != (tc.initial != "") {
					t.Fatalf("preview change %+v, want old sha %s", fc, want)
				}
				switch tc.meddle {
				case "":
				case "-":
					os.Remove(p)
				default:
					writeFile(t, p, tc.meddle, 0o644)
				}
				before, _ := os.ReadFile(p)
				ctx := WithExpectedContent(WithExpectedContent(ctxT(t), "/elsewhere", "x"), fc.Path, fc.OldSHA256)
				out, err := tl.Run(ctx, lt, raw(t, c.params(p)))
				if err != nil {
					t.Fatal(err)
				}
				after, _ := os.ReadFile(p)
				if tc.meddle == "" {
					if out.IsError || string(after) == string(before) {
						t.Fatalf("match: %+v, file %q", out, after)
					}
					return
				}
				msg := p + ": file changed since the change was approved; run again"
				if c.tool == EditFileName && tc.meddle == "-" {
					msg = p + ": no such file or directory"
				}
				if !out.IsError || !strings.Contains(out.Observation, msg) || string(after) != string(before) {
					t.Fatalf("mismatch: %+v, file %q", out, after)
				}
			})
		}
	}
}

// TestUploadUnjournaled: an upload over a file whose content the undo
// journal cannot take is refused, never journaled as empty.
func TestUploadUnjournaled(t *testing.T) {
	lt := newLocal(t)
	dir := t.TempDir()
	type rec struct {
		fc  FileChange
		old []byte
	}
	var journal []rec
	hook := WithBeforeChange(func(_ context.Context, _ transport.Transport, fc FileChange, old []byte) error {
		if fc.Existed && old == nil {
			t.Errorf("hook got existed with nil content: %+v", fc)
		}
		journal = append(journal, rec{fc, old})
		return nil
	})
	reg := Default(testPolicy(), hook)
	src := filepath.Join(t.TempDir(), "src")
	writeFile(t, src, "new content\n", 0o644)
	big := filepath.Join(dir, "big")
	bigData := strings.Repeat("z", 1<<20+1)
	writeFile(t, big, bigData, 0o644)
	out, err := reg.Run(ctxT(t), lt, UploadFileName, map[string]any{"local_path": src, "remote_path": big})
	if err != nil || !out.IsError || !strings.Contains(out.Observation,
		big+" cannot be undone: existing file is 1048577 bytes, over the journal limit of 1048576 bytes; remove it first or raise max_write_bytes") {
		t.Fatalf("%+v %v", out, err)
	}
	if readFile(t, big) != bigData || len(journal) != 0 {
		t.Fatalf("file replaced or journaled: %d", len(journal))
	}
	if os.Getuid() != 0 {
		locked := filepath.Join(dir, "locked")
		writeFile(t, locked, "secret", 0o200)
		out, _ = reg.Run(ctxT(t), lt, UploadFileName, map[string]any{"local_path": src, "remote_path": locked})
		if !out.IsError || !strings.Contains(out.Observation, "cannot be undone") || len(journal) != 0 {
			t.Fatalf("unreadable: %+v", out)
		}
	}
	// An empty file is content: the journal gets it, not nil.
	empty := filepath.Join(dir, "empty")
	writeFile(t, empty, "", 0o644)
	out, err = reg.Run(ctxT(t), lt, UploadFileName, map[string]any{"local_path": src, "remote_path": empty})
	if err != nil || out.IsError || len(journal) != 1 || !journal[0].fc.Existed || journal[0].old == nil ||
		journal[0].fc.OldSHA256 != sha(nil) || readFile(t, empty) != "new content\n" {
		t.Fatalf("%+v %v %+v", out, err, journal)
	}
	if fc := out.FilesChanged[0]; fc.NewSHA256 != sha([]byte("new content\n")) || !fc.Existed {
		t.Fatalf("%+v", fc)
	}
	// Without a journal there is nothing to lose: the upload goes ahead.
	out, err = Default(testPolicy()).Run(ctxT(t), lt, UploadFileName, map[string]any{"local_path": src, "remote_path": big})
	if err != nil || out.IsError || readFile(t, big) != "new content\n" {
		t.Fatalf("%+v %v", out, err)
	}
}

// TestDownloadOverwrite: an existing local file is replaced only with
// overwrite true.
func TestDownloadOverwrite(t *testing.T) {
	lt := newLocal(t)
	remote := filepath.Join(t.TempDir(), "r.txt")
	writeFile(t, remote, "remote\n", 0o644)
	localDir := t.TempDir()
	dst := filepath.Join(localDir, "r.txt")
	writeFile(t, dst, "operator's\n", 0o644)
	reg := Default(testPolicy())
	for _, target := range []string{dst, localDir} {
		out, err := reg.Run(ctxT(t), lt, DownloadFileName, map[string]any{"local_path": target, "remote_path": remote})
		if err != nil || !out.IsError || !strings.Contains(out.Observation, dst+" already exists on this machine; set overwrite to true") ||
			readFile(t, dst) != "operator's\n" {
			t.Fatalf("%s: %+v %v", target, out, err)
		}
	}
	out, err := reg.Run(ctxT(t), lt, DownloadFileName, map[string]any{"local_path": dst, "remote_path": remote, "overwrite": true})
	if err != nil || out.IsError || readFile(t, dst) != "remote\n" {
		t.Fatalf("%+v %v", out, err)
	}
}
