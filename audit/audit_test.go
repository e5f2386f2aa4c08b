package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/autoshell/agent/safety"
)

func TestOutputHead(t *testing.T) {
	s := strings.Repeat("é", 400) // 800 bytes
	h := outputHead(s)
	if len(h) > OutputHeadBytes || !utf8.ValidString(h) {
		t.Errorf("head %d bytes, valid=%v", len(h), utf8.ValidString(h))
	}
	// A secret straddling the cut is redacted, not half kept.
	s = strings.Repeat("x", 500) + " PASSWORD=abcdefghijklmnop"
	if h := outputHead(s); strings.Contains(h, "abcdefg") {
		t.Errorf("half secret kept: %q", h[490:])
	}
}

func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "agent", "audit.log")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 21, 9, 1, 2, 345, time.FixedZone("X", 3600))
	code := 1
	err = a.Append(context.Background(), Entry{
		Time: ts, Session: "s1", Host: "vub", Tool: "execute_command",
		Params:   map[string]any{"command": "curl -H 'Authorization: Bearer abc' x", "timeout": 5},
		Risk:     safety.Assessment{Level: safety.High, Reasons: []string{"curl: network"}},
		Decision: Allowed, By: safety.ByUser, ExitCode: &code,
		Output: strings.Repeat("o", 600), Duration: 1500 * time.Millisecond, Error: "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(context.Background(), Entry{Tool: "write_file", Decision: Denied, By: safety.ByPolicy, Risk: safety.Assessment{Level: safety.Medium}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	m := lines[0]
	if m["time"] != "2026-11-21T08:01:02.000000345Z" || m["risk"] != "high" || m["decision"] != "allowed" ||
		m["by"] != "user" || m["exit_code"] != 1.0 || m["duration_ms"] != 1500.0 || len(m["output"].(string)) != OutputHeadBytes {
		t.Errorf("line 1: %v", m)
	}
	if p := m["parameters"].(map[string]any); p["command"] != "curl -H 'Authorization: Bearer [REDACTED]' x" || p["timeout"] != 5.0 {
		t.Errorf("parameters: %v", p)
	}
	if _, ok := lines[1]["exit_code"]; ok || lines[1]["decision"] != "denied" {
		t.Errorf("line 2: %v", lines[1])
	}
	for name, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700} {
		fi, err := os.Stat(name)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode().Perm(), err, want)
		}
	}
}

func TestAuditNarrowsPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

func TestAuditConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			for i := range 3 {
				e := Entry{Session: "s", Host: fmt.Sprintf("h%d", g), Tool: "execute_command",
					Params: map[string]any{"command": fmt.Sprintf("echo %d %s", i, strings.Repeat("x", 3000))},
					Output: strings.Repeat("y", 2000), Decision: Allowed, By: safety.ByPolicy}
				if err := a.Append(context.Background(), e); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	a.Close()
	lines := readLines(t, path)
	if len(lines) != 60 {
		t.Errorf("%d lines, want 60", len(lines))
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []map[string]any
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v: %q", n, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// Lines logged at once share fsyncs (a group commit), and each Log returns
// only once an fsync that began after its line was written has finished.
func TestAuditGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	syncs, durable := 0, int64(0) // fsyncs, and the bytes on disk after the last one
	old := syncFile
	syncFile = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond) // a slow disk
		if err := old(f); err != nil {
			return err
		}
		mu.Lock()
		syncs++
		durable = max(durable, fi.Size())
		mu.Unlock()
		return nil
	}
	t.Cleanup(func() { syncFile = old })
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			for i := range 3 {
				host := fmt.Sprintf("h%d-%d", g, i)
				if err := a.Append(context.Background(), Entry{Session: "s", Host: host, Tool: "t", Decision: Allowed}); err != nil {
					t.Error(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return
				}
				at := strings.Index(string(data), `"host":"`+host+`"`)
				end := at + strings.IndexByte(string(data[at:]), '\n') + 1
				mu.Lock()
				if at < 0 || int64(end) > durable {
					t.Errorf("Log of %s returned with %d bytes synced, its line ends at %d", host, durable, end)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	a.Close()
	if n := len(readLines(t, path)); n != 60 {
		t.Errorf("%d lines, want 60", n)
	}
	if syncs >= 60 || syncs == 0 {
		t.Errorf("%d fsyncs for 60 lines logged by 20 goroutines at once, want fewer (shared)", syncs)
	}
	t.Logf("%d fsyncs for 60 lines", syncs)
}
