package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/autoshell/agent/safety"
)

// logN appends n entries to a new log at dir/audit.log.
func logN(t testing.TB, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "audit.log")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		code := i
		if err := a.Append(context.Background(), Entry{Session: "s", Host: fmt.Sprintf("h%d", i), Tool: "execute_command",
			Params: map[string]any{"command": fmt.Sprintf("echo %d", i)}, Command: fmt.Sprintf("echo %d", i),
			Risk: safety.Assessment{Level: safety.Safe}, Decision: Allowed, By: safety.ByPolicy, ExitCode: &code}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.SplitAfter(string(b), "\n")
	return ls[:len(ls)-1] // after the last newline: ""
}

// TestVerifyNamesFirstBrokenLine: an intact log verifies; an edited,
// removed, reordered, inserted or repeated line, an edited or removed last
// line, a cut file are each reported at the first broken line.
func TestVerifyNamesFirstBrokenLine(t *testing.T) {
	edit := func(l string) string { return strings.Replace(l, `"exit_code":`, `"exit_code":1`, 1) }
	for _, tc := range []struct {
		name   string
		change func([]string) []string
		line   int
		reason string
	}{
		{"intact", func(ls []string) []string { return ls }, 0, ""},
		{"line 4 edited", func(ls []string) []string { ls[3] = edit(ls[3]); return ls }, 4, "changed"},
		{"line 1 edited", func(ls []string) []string { ls[0] = strings.Replace(ls[0], "h0", "hX", 1); return ls }, 1, "changed"},
		{"line 4 not JSON", func(ls []string) []string { ls[3] = "garbage\n"; return ls }, 4, "not a JSON record"},
		{"line 4 removed", func(ls []string) []string { return append(ls[:3], ls[4:]...) }, 4, "removed"},
		{"lines 4 and 5 swapped", func(ls []string) []string { ls[3], ls[4] = ls[4], ls[3]; return ls }, 4, "reordered"},
		{"line 5 repeated", func(ls []string) []string { return append(ls[:5], ls[4:]...) }, 6, "reordered or repeated"},
		{"line inserted after 6", func(ls []string) []string {
			forged := strings.Replace(ls[6], `"h6"`, `"evil"`, 1)
			return append(ls[:6], append([]string{forged}, ls[6:]...)...)
		}, 8, "repeated"}, // the forged line 7 chains; the real one after it does not
		{"last line edited", func(ls []string) []string { ls[9] = edit(ls[9]); return ls }, 10, "head"},
		{"last line removed", func(ls []string) []string { return ls[:9] }, 10, "removed from the end"},
		{"last three removed", func(ls []string) []string { return ls[:7] }, 8, "removed from the end"},
		{"first line removed", func(ls []string) []string { return ls[1:] }, 1, "removed from the start"},
		{"cut mid-line", func(ls []string) []string { ls[9] = ls[9][:20]; return ls }, 10, "torn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := logN(t, dir, 10)
			intact := lines(t, path)
			if len(intact) != 10 {
				t.Fatalf("%d lines", len(intact))
			}
			ls := tc.change(intact)
			s := strings.Join(ls, "")
			if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Verify(path)
			var p *Problem
			switch {
			case tc.line == 0 && err != nil:
				t.Errorf("intact log: %v", err)
			case tc.line != 0 && !errors.As(err, &p):
				t.Errorf("not detected: %v", err)
			case tc.line != 0 && (p.Line != tc.line || !strings.Contains(p.Reason, tc.reason)):
				t.Errorf("got %v, want line %d (%s)", err, tc.line, tc.reason)
			}
		})
	}
}

// TestRotationChains: past MaxBytes the log goes on in a new file whose
// first line names the old one and its last hash; Verify of the files in
// order holds, and of a file out of order does not.
func TestRotationChains(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a.MaxBytes = 2000
	for i := range 30 {
		if err := a.Append(context.Background(), Entry{Host: "h", Tool: "t", Decision: Allowed, Command: strings.Repeat("x", 100) + fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	rotated, _ := filepath.Glob(path + ".2*")
	if len(rotated) < 2 {
		t.Fatalf("rotated files: %v", rotated)
	}
	files := append(rotated, path) // the names sort by time
	sums, err := Verify(files...)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, s := range sums {
		total += s.Lines
		if i > 0 && s.Previous != filepath.Base(files[i-1]) {
			t.Errorf("%s names %q as the file before, want %s", s.File, s.Previous, files[i-1])
		}
	}
	if total != 30+len(rotated) {
		t.Errorf("%d lines in all, want 30 and one rotate record a file", total)
	}
	if _, err := Verify(files[1], files[0]); err == nil {
		t.Error("files out of order verified")
	}
	if _, err := Verify(files[0], files[2]); err == nil {
		t.Error("a missing file in between verified")
	}
}

// TestChainAcrossProcesses: two logs on one file (as two agent processes)
// appending at once keep one chain.
func TestChainAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	var logs []*Log
	for range 2 {
		a, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, a)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if err := logs[g%2].Append(context.Background(), Entry{Host: fmt.Sprintf("g%d", g), Tool: "t", Decision: Allowed, Command: fmt.Sprint(i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, a := range logs {
		a.Close()
	}
	sums, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if sums[0].Lines != 200 || sums[0].LastSeq != 200 || sums[0].HeadLags {
		t.Errorf("%+v", sums[0])
	}
}

// TestAppendFailsClosed: a log on a full disk (/dev/full) refuses the
// line with an error; nothing pretends it was written.
func TestAppendFailsClosed(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	err = a.Append(context.Background(), Entry{Host: "h", Tool: "t", Decision: Started})
	if err == nil || !strings.Contains(err.Error(), "no space") {
		t.Errorf("append on a full disk: %v", err)
	}
}

// TestOpenRotatesUnchained: a log from before the chain (or with a torn
// last line) is rotated away; the new file's first line names it.
func TestOpenRotatesUnchained(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(path, []byte("{\"time\":\"x\",\"tool\":\"old\"}\n{\"time\":\"y\""), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(context.Background(), Entry{Host: "h", Tool: "t", Decision: Allowed}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	old, _ := filepath.Glob(path + ".2*")
	if len(old) != 1 {
		t.Fatalf("rotated: %v", old)
	}
	if b, _ := os.ReadFile(old[0]); !strings.Contains(string(b), `"tool":"old"`) {
		t.Errorf("the old log's content: %q", b)
	}
	sums, err := Verify(path)
	if err != nil || sums[0].Lines != 2 || sums[0].Previous != filepath.Base(old[0]) {
		t.Errorf("%+v %v", sums, err)
	}
}

// FuzzVerify: Verify of any file content (and head) never panics, and a
// log it accepts has consecutive records.
func FuzzVerify(f *testing.F) {
	dir := f.TempDir()
	path := logN(f, dir, 3)
	good, _ := os.ReadFile(path)
	headB, _ := os.ReadFile(path + ".head")
	f.Add(good, headB)
	f.Add([]byte("{\"seq\":1,\"prev\":\"\"}\n{\"seq\":2}\n"), []byte("2 abc 10"))
	f.Add([]byte("\n\n{}"), []byte(""))
	f.Fuzz(func(t *testing.T, content, head []byte) {
		d := t.TempDir()
		p := filepath.Join(d, "audit.log")
		os.WriteFile(p, content, 0o600)
		os.WriteFile(p+".head", head, 0o600)
		sums, err := Verify(p)
		if err == nil && len(sums) == 1 && sums[0].Lines > 0 && sums[0].LastSeq-sums[0].FirstSeq != uint64(sums[0].Lines-1) {
			t.Fatalf("accepted non-consecutive records: %+v", sums[0])
		}
	})
}

// BenchmarkAppend is one step's audit cost: the started line (no fsync)
// and the result line (fsync), chained.
func BenchmarkAppend(b *testing.B) {
	b.Run("fsync", benchAppend)
	b.Run("no-fsync", func(b *testing.B) {
		old := syncFile
		syncFile = func(*os.File) error { return nil }
		defer func() { syncFile = old }()
		benchAppend(b)
	})
}

func benchAppend(b *testing.B) {
	a, err := Open(filepath.Join(b.TempDir(), "audit.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	code := 0
	e := Entry{Session: "s", Host: "h", Tool: "execute_command", Params: map[string]any{"command": "true"}, Command: "true",
		Risk: safety.Assessment{Level: safety.Safe}, By: safety.ByPolicy, Approval: "safe"}
	for b.Loop() {
		e.Decision, e.ExitCode = Started, nil
		if err := a.AppendUnsynced(context.Background(), e); err != nil {
			b.Fatal(err)
		}
		e.Decision, e.ExitCode = Allowed, &code
		if err := a.Append(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}
