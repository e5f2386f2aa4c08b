package confine

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// marker reads stdout and stderr up to nonce's end markers and returns
// what stdout's said after the nonce (":STATUS:BG").
func (s *served) marker(nonce string) string {
	s.t.Helper()
	var rest string
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stdout ended before %s's marker", nonce)
		}
		if i := strings.Index(line, nonce+":"); i >= 0 {
			rest = strings.TrimSuffix(line[i+len(nonce):], "\n")
			break
		}
	}
	for {
		line, err := s.err.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stderr ended before %s's marker", nonce)
		}
		if strings.HasSuffix(line, nonce+"\n") {
			return rest
		}
	}
}

// batch sends the commands as one write: the first as a request, the
// others batched after it (BatchedPrefix).
func (s *served) batch(dir string, cmds ...string) []string {
	s.t.Helper()
	var req strings.Builder
	var nonces []string
	for i, c := range cmds {
		s.n++
		nonce := "b" + strings.Repeat("x", s.n)
		nonces = append(nonces, nonce)
		next := "1"
		if i > 0 {
			next = BatchedPrefix + "1"
		}
		req.WriteString(nonce + " - " + next + " " + quoteRequest(c, dir, "PID"+nonce) + "\n")
	}
	if _, err := io.WriteString(s.in, req.String()); err != nil {
		s.t.Fatal(err)
	}
	return nonces
}

// TestServeBatch: a batch's commands run in order, each only while the
// ones before it succeeded; the others are answered not run.
func TestServeBatch(t *testing.T) {
	s := serve(t)
	dir := t.TempDir()
	n := s.batch(dir, "echo a > 1", "test -e 1 && echo b > 2", "exit 3", "echo c > 4", "echo d > 5")
	want := []string{":0:0", ":0:0", ":3:0", ":" + NotRunStatus + ":0", ":" + NotRunStatus + ":0"}
	for i, nonce := range n {
		if got := s.marker(nonce); got != want[i] {
			t.Errorf("command %d: marker %q, want %q", i+1, got, want[i])
		}
	}
	for f, want := range map[string]bool{"1": true, "2": true, "4": false, "5": false} {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != want {
			t.Errorf("file %s there: %v, want %v", f, err == nil, want)
		}
	}
	// The next batch starts afresh: its first command is not conditional.
	n = s.batch(dir, "echo e > 6", "true")
	for i, nonce := range n {
		if got := s.marker(nonce); got != ":0:0" {
			t.Errorf("second batch, command %d: %q", i+1, got)
		}
	}
	// A first command that fails: nothing after it runs.
	n = s.batch(dir, "false", "echo f > 7")
	if a, b := s.marker(n[0]), s.marker(n[1]); a != ":1:0" || b != ":"+NotRunStatus+":0" {
		t.Errorf("after a failed first command: %q %q", a, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "7")); err == nil {
		t.Error("a command after a failed one ran")
	}
	// A NEXT that is only the prefix, or the prefix and junk, is a
	// batched request all the same: not run after a failure.
	for _, next := range []string{BatchedPrefix, BatchedPrefix + "x", BatchedPrefix + BatchedPrefix + "1"} {
		s.n++
		nonce := "j" + strings.Repeat("x", s.n)
		io.WriteString(s.in, nonce+" - "+next+" "+quoteRequest("echo g > 8", dir, "PID"+nonce)+"\n")
		if got := s.marker(nonce); got != ":"+NotRunStatus+":0" {
			t.Errorf("NEXT %q after a failure: %q", next, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "8")); err == nil {
		t.Error("a batched request with an odd NEXT ran after a failure")
	}
}

// TestServeBatchHungUp: once the worker's input hangs up (its controller
// is gone), a batch's later commands do not start, even though their
// requests were read.
func TestServeBatchHungUp(t *testing.T) {
	s := serve(t)
	dir := t.TempDir()
	n := s.batch(dir, "sleep 0.5; echo a > 1", "echo b > 2")
	time.Sleep(100 * time.Millisecond) // both requests read, the first running
	s.in.Close()
	if a, b := s.marker(n[0]), s.marker(n[1]); a != ":0:0" || b != ":"+NotRunStatus+":0" {
		t.Errorf("markers %q %q, want the first run, the second not", a, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "2")); err == nil {
		t.Error("a batched command ran after its controller went away")
	}
}

// TestQueued: a shell is started ahead only when no command's request
// has come yet: not when a batch's next request is already read in,
// whole or in part, but when only a states or look request is (sent
// behind the command just run: the next command comes a round trip
// later).
func TestQueued(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"n2 - ?1 'true' '/' 'PIDn2'\n", true},
		{"n2 - ?0 'tr", true},
		{"n2", true},
		{"n2 = state 4096 '/a'\n", false},
		{"n2 = look 4096 '/a'\nn3 - 1 'true' '/' 'PIDn3'\n", false},
	} {
		rd := bufio.NewReaderSize(strings.NewReader("first\n"+tc.in), 64)
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		if got := queued(rd); got != tc.want {
			t.Errorf("%q queued: %v, want %v", tc.in, got, tc.want)
		}
	}
}
