package confine

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// states sends a state request for paths (max bytes a file) and returns
// its answer's lines and status.
func (s *served) states(max int64, paths ...string) ([]string, string, int) {
	s.t.Helper()
	s.n++
	nonce := "s" + strconv.Itoa(s.n)
	return s.raw(nonce, strings.TrimSuffix(StatesRequest(nonce, max, paths), "\n"))
}

// raw sends one request line as it is.
func (s *served) raw(nonce, req string) ([]string, string, int) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, req+"\n"); err != nil {
		s.t.Fatal(err)
	}
	out, errs, status, _ := s.read(nonce)
	if out == "" {
		return nil, errs, status
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n"), errs, status
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestServeStates: the served worker says a file's state as the undo
// journal compares it (journal.State: absent, the content's SHA-256, a
// special file's kind), read after a command in the same round trip, and
// leaves to the controller what it might say otherwise (a directory's
// tree, a file over the bound, one it cannot read).
func TestServeStates(t *testing.T) {
	s := serve(t)
	dir := t.TempDir()
	// A command first: the state request is read after it, in order.
	if _, _, status, _ := s.run("printf 'hello\\n' > f && mkfifo p && mkdir d && ln -s f l && : > e && head -c 5000 /dev/zero > big && printf x > locked && chmod 000 locked", dir); status != 0 {
		t.Fatalf("set-up: status %d", status)
	}
	big := make([]byte, 5000)
	want := []string{
		"6 " + sum([]byte("hello\n")),
		"0 absent",
		"0 special:fifo",
		"0 ?",                         // a tree's state is the controller's
		"6 " + sum([]byte("hello\n")), // links followed, as journal.State's read
		"0 " + sum(nil),
		"5000 " + sum(big),
		"0 absent", // under a missing directory
		"0 special:device",
		"0 ?", // ENOTDIR: SFTP's "no such file", left to the controller
	}
	paths := []string{"f", "missing", "p", "d", "l", "e", "big", "nodir/x", "/dev/null", "f/x"}
	for i := range paths {
		if !strings.HasPrefix(paths[i], "/") {
			paths[i] = filepath.Join(dir, paths[i])
		}
	}
	got, errs, status := s.states(1<<20, paths...)
	if status != 0 || errs != "" || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("states: status %d, stderr %q\n got %q\nwant %q", status, errs, got, want)
	}
	// Over the bound: left to the controller (its large state).
	if got, _, _ := s.states(4999, filepath.Join(dir, "big")); len(got) != 1 || got[0] != "0 ?" {
		t.Errorf("a file over the bound: %q", got)
	}
	if got, _, _ := s.states(5000, filepath.Join(dir, "big")); len(got) != 1 || got[0] != "5000 "+sum(big) {
		t.Errorf("a file at the bound: %q", got)
	}
	if os.Geteuid() != 0 { // root reads a mode 000 file
		if got, _, _ := s.states(100, filepath.Join(dir, "locked")); len(got) != 1 || got[0] != "0 ?" {
			t.Errorf("an unreadable file: %q", got)
		}
	}
	// The worker goes on serving commands after them.
	if out, _, status, _ := s.run("cat f", dir); out != "hello\n" || status != 0 {
		t.Errorf("a command after the state requests: %q, %d", out, status)
	}
}

// TestServeStatesBad: a state request the worker cannot read ends with
// LaunchExit and a message, reads nothing, and the worker goes on.
func TestServeStatesBad(t *testing.T) {
	s := serve(t)
	dir := t.TempDir()
	for _, rest := range []string{
		"", "x /", "-1 /", "010 /", "10", "10 ", "10 a", "10 /%20%2", "10 /%2f", "10 /%61", // not absolute, bad escapes
		"10 /%00", "10 / /  /", "10 /a\tb",
	} {
		got, errs, status := s.raw("b", "b "+statesKey+" "+statesVerb+" "+rest)
		if status != LaunchExit || got != nil || !strings.Contains(errs, "a bad state request") {
			t.Errorf("%q: status %d, stdout %q, stderr %q", rest, status, got, errs)
		}
	}
	if out, _, status, _ := s.run("echo ok", dir); out != "ok\n" || status != 0 {
		t.Errorf("a command after bad state requests: %q, %d", out, status)
	}
}

// TestStatesRequestOldLauncher: a launcher from before the state request
// reads it as a command's request, which it cannot parse: it would run
// nothing (backward-safe; a kept launcher is content-addressed anyway).
func TestStatesRequestOldLauncher(t *testing.T) {
	req := StatesRequest("n", 10, []string{"/tmp/x y'; touch /tmp/pwned", "/b"})
	f := strings.SplitN(strings.TrimSuffix(req, "\n"), " ", 4)
	if words, err := ParseRequest(f[3]); err == nil {
		t.Errorf("an old launcher would parse a state request as words %q", words)
	}
}

func FuzzStatesRequest(f *testing.F) {
	f.Add("10 /tmp")
	f.Add("0 / /")
	f.Add("x")
	f.Add("10 /%00")
	f.Add("10 /a%20b")
	f.Fuzz(func(t *testing.T, rest string) {
		max, paths, ok := parseStatesRequest(rest)
		if !ok {
			return
		}
		// What it read is what the transport would have sent.
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
				t.Fatalf("%q: a path %q", rest, p)
			}
		}
		if req := StatesRequest("n", max, paths); req != "n = state "+rest+"\n" || max < 0 || len(paths) == 0 {
			t.Fatalf("%q read as %d %q", rest, max, paths)
		}
	})
}

// TestServeLooks: a look request answers what is at each path as the
// transport's Inspect would (checked against SFTP's Inspect in
// transport/ssh), and leaves the rest to the controller.
func TestServeLooks(t *testing.T) {
	s := serve(t)
	dir := t.TempDir()
	if _, _, status, _ := s.run("printf 'hi\\n' > f && chmod 640 f && mkdir d && ln -s d l && mkfifo p && ln f f2", dir); status != 0 {
		t.Fatalf("set-up: status %d", status)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "f"), &st); err != nil {
		t.Fatal(err)
	}
	fileLine := "= " + strconv.FormatUint(uint64(st.Mode), 16) + " 3 " + strconv.FormatInt(st.Mtim.Sec, 10) + " " +
		strconv.Itoa(int(st.Uid)) + " " + strconv.Itoa(int(st.Gid)) + " 2" // f and f2: two names
	paths := []string{"f", "f2", "missing", "nodir/x", "l/x", "l", "d/../f", "f/x", "p"}
	maxes := []int64{10, 0, 10, 10, 10, 10, 10, 10, 10}
	want := []string{fileLine + " x68690a", fileLine + " -", "-", "!", "?", "?", "?", "?", "-"}
	for i := range paths {
		paths[i] = dir + "/" + paths[i]
	}
	nonce := "l1"
	got, errs, status := s.raw(nonce, strings.TrimSuffix(LookRequest(nonce, paths, maxes), "\n"))
	if status != 0 || errs != "" || len(got) != len(want) {
		t.Fatalf("looks: status %d, stderr %q, %q", status, errs, got)
	}
	for i := range want {
		if i == len(want)-1 {
			if !strings.HasPrefix(got[i], "= 11") || !strings.HasSuffix(got[i], " -") { // a fifo: S_IFIFO, never read
				t.Errorf("%s: %q, want a fifo not read", paths[i], got[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("%s (read %d): %q, want %q", paths[i], maxes[i], got[i], want[i])
		}
	}
	if got, _, _ := s.raw("l2", strings.TrimSuffix(LookRequest("l2", []string{"/"}, []int64{0}), "\n")); len(got) != 1 || !strings.HasPrefix(got[0], "= 41") {
		t.Errorf("/: %q", got)
	}
	for _, rest := range []string{"", "10", "10 /a 5", "x /a", "10 a", "10 /a%00"} {
		got, errs, status := s.raw("b", "b "+statesKey+" "+lookVerb+" "+rest)
		if status != LaunchExit || got != nil || !strings.Contains(errs, "a bad look request") {
			t.Errorf("%q: status %d, stdout %q, stderr %q", rest, status, got, errs)
		}
	}
	if out, _, status, _ := s.run("echo ok", dir); out != "ok\n" || status != 0 {
		t.Errorf("a command after the looks: %q, %d", out, status)
	}
}
