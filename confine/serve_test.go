package confine

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// quoteRequest is words as the SSH transport quotes a request
// (transport/ssh requestLine).
func quoteRequest(words ...string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j, part := range strings.Split(w, "\n") {
			if j > 0 {
				b.WriteString(`"$agent_nl"`)
			}
			b.WriteString("'" + strings.ReplaceAll(part, "'", `'\''`) + "'")
		}
	}
	return b.String()
}

// testWrapper is the SSH transport's wrapper without its directory
// checks: the PID line, then the command under WRAP, if any.
const testWrapper = `cd "$2" || exit 127; printf '%s %s ok\n' "$3" "$$" >&2; agent_cmd=$1; shift 3; ` +
	`if [ $# -gt 0 ]; then exec "$@" /bin/sh -c "$agent_cmd"; fi; eval "$agent_cmd"`

// served is a launcher run with ServeFlag, driven as the SSH transport
// drives its worker.
type served struct {
	t        *testing.T
	cmd      *exec.Cmd
	in       io.WriteCloser
	out, err *bufio.Reader
	n        int
}

func serve(t *testing.T) *served {
	t.Helper()
	cmd := exec.Command(os.Args[0], LaunchArg, ServeFlag)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	errs, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	s := &served{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), err: bufio.NewReader(errs)}
	io.WriteString(in, "hello "+quoteRequest(testWrapper)+"\n")
	stdout, _, status, bg := s.read("hello")
	if stdout != os.Getenv("HOME")+"\n" || status != 0 || bg {
		t.Fatalf("ready: stdout %q, status %d, bg %v", stdout, status, bg)
	}
	return s
}

// read reads both streams up to nonce's end markers.
func (s *served) read(nonce string) (stdout, stderr string, status int, bg bool) {
	s.t.Helper()
	var o, e strings.Builder
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stdout ended before the marker: %q", o.String())
		}
		if i := strings.Index(line, nonce+":"); i >= 0 { // output without a last newline precedes it
			o.WriteString(line[:i])
			f := strings.Split(strings.TrimSuffix(line[i+len(nonce)+1:], "\n"), ":")
			status, _ = strconv.Atoi(f[0])
			bg = f[1] == "1"
			break
		}
		o.WriteString(line)
	}
	for {
		line, err := s.err.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stderr ended before the marker: %q", e.String())
		}
		if strings.HasSuffix(line, nonce+"\n") {
			e.WriteString(strings.TrimSuffix(line, nonce+"\n"))
			break
		}
		e.WriteString(line)
	}
	return o.String(), e.String(), status, bg
}

// run runs command in dir under wrap, as a request.
func (s *served) run(command, dir string, wrap ...string) (stdout, stderr string, status int, bg bool) {
	s.t.Helper()
	return s.runNext("1", command, dir, wrap...)
}

// runNext is run with the request's NEXT.
func (s *served) runNext(next, command, dir string, wrap ...string) (stdout, stderr string, status int, bg bool) {
	s.t.Helper()
	s.n++
	nonce := "n" + strconv.Itoa(s.n)
	req := nonce + " - " + next + " " + quoteRequest(append([]string{command, dir, "PID" + nonce}, wrap...)...) + "\n"
	if _, err := io.WriteString(s.in, req); err != nil {
		s.t.Fatal(err)
	}
	stdout, stderr, status, bg = s.read(nonce)
	stderr = strings.TrimPrefix(stderr, "PID"+nonce+" ")
	if i := strings.IndexByte(stderr, '\n'); i >= 0 && strings.HasSuffix(stderr[:i], " ok") {
		stderr = stderr[i+1:]
	}
	return stdout, stderr, status, bg
}

func TestServeRuns(t *testing.T) {
	s := serve(t)
	dir := t.TempDir()
	out, errs, status, bg := s.run("pwd; echo 'a\nb' >&2; exit 3", dir)
	if out != dir+"\n" || errs != "a\nb\n" || status != 3 || bg {
		t.Errorf("got %q %q %d %v", out, errs, status, bg)
	}
	if _, _, status, _ := s.run("kill -TERM $$", dir); status != 128+15 {
		t.Errorf("a command killed by TERM: status %d, want 143", status)
	}
	_, _, _, bg = s.run("sleep 30 >/dev/null 2>&1 & echo $! > bg.pid", dir)
	if !bg {
		t.Error("a background process left: not reported")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "bg.pid")); err == nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if p, err := os.FindProcess(pid); err == nil && pid > 0 {
			p.Kill()
		}
	}
	// Another wrapper than the launcher's own runs as the shell worker
	// runs it: the wrapper execs it with the shell.
	if out, _, status, _ := s.run(`printf '%s' "$AGENT_T"`, dir, "env", "AGENT_T=wrapped"); out != "wrapped" || status != 0 {
		t.Errorf("under env: %q, status %d", out, status)
	}
	if _, errs, status, _ := s.run("echo x", dir, "/no/such/launcher", RulesFlag, "/x", "--"); status != 127 || errs == "" {
		t.Errorf("another launcher's path: status %d, stderr %q (it is run as a wrapper)", status, errs)
	}
}

// TestServeConfines: a request whose wrapper is the launcher's own rules
// runs confined in the server's process, and its rules compile again
// when a link on the way to a secret moves (no launcher process started
// to check).
func TestServeConfines(t *testing.T) {
	needLandlock(t)
	h, spec := home(t, ReadOnly)
	// ~/.keys is a link to the real secrets: the rules deny its target.
	for _, d := range []string{"keys1", "keys2"} {
		os.MkdirAll(filepath.Join(h, d), 0o700)
		os.WriteFile(filepath.Join(h, d, "id"), []byte("SECRET-"+d), 0o600)
	}
	if err := os.Symlink("keys1", filepath.Join(h, ".keys")); err != nil {
		t.Fatal(err)
	}
	spec.NoRead = append(spec.NoRead, h+"/.keys")
	rules := filepath.Join(t.TempDir(), "safe.rules")
	if err := WriteRuleset(rules, Compile(spec)); err != nil {
		t.Fatal(err)
	}
	compiled, _ := os.ReadFile(rules)
	self := []string{os.Args[0], LaunchArg}
	wrap := append(slices.Clone(self), RulesFlag, rules, "--")
	s := serve(t)

	if out, _, status, _ := s.run("cat work/notes", h, wrap...); out != "notes" || status != 0 {
		t.Errorf("a safe read: %q, status %d", out, status)
	}
	for _, cmd := range []string{"echo x > work/new", "cat .ssh/id_rsa", "cat keys1/id", "cat .keys/id"} {
		if out, _, status, _ := s.run(cmd, h, wrap...); status == 0 || strings.Contains(out, "SECRET") {
			t.Errorf("%s: ran confined with status 0 (%q)", cmd, out)
		}
	}
	if _, err := os.Stat(filepath.Join(h, "work/new")); err == nil {
		t.Error("a safe step wrote")
	}
	// The same server, unconfined: the level is the request's.
	if _, _, status, _ := s.run("cat keys1/id >/dev/null && echo x > work/new", h); status != 0 {
		t.Error("an unconfined request was confined")
	}
	if out, _, _, _ := s.run("cat keys2/id", h, wrap...); out != "SECRET-keys2" {
		t.Fatalf("keys2 is not denied yet, but read %q", out)
	}
	// The link moves: keys2 now holds what .keys names.
	time.Sleep(10 * time.Millisecond)
	os.Remove(filepath.Join(h, ".keys"))
	if err := os.Symlink("keys2", filepath.Join(h, ".keys")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"cat keys2/id", "cat .keys/id"} {
		if out, _, status, _ := s.run(cmd, h, wrap...); status == 0 || strings.Contains(out, "SECRET") {
			t.Errorf("after the link moved, %s: status %d, %q (stale rules)", cmd, status, out)
		}
	}
	// The rules compiled again were written back: the next session (a
	// launcher kept on the host) starts from them.
	// (Not "not stale": the home is under a busy /tmp, which the rules
	// list.)
	if b, err := os.ReadFile(rules); err != nil || string(b) == string(compiled) {
		t.Errorf("the rules file was not written back after the recompilation (%v)", err)
	}
}

// TestServeSavesPatchesAtTheEnd: rules patched for a new entry (as /tmp
// gets between most commands on a busy host) are written back when the
// session ends, not after each command: each writing moved the time of
// the launcher's directory, which the rules watch, and made the next
// commands' checks read its entries again.
func TestServeSavesPatchesAtTheEnd(t *testing.T) {
	needLandlock(t)
	h, spec := home(t, ReadOnly)
	rules := filepath.Join(t.TempDir(), "safe.rules")
	if err := WriteRuleset(rules, Compile(spec)); err != nil {
		t.Fatal(err)
	}
	self := []string{os.Args[0], LaunchArg}
	wrap := append(slices.Clone(self), RulesFlag, rules, "--")
	s := serve(t)
	if out, _, status, _ := s.run("cat work/notes", h, wrap...); out != "notes" || status != 0 {
		t.Fatalf("a safe read: %q, status %d", out, status)
	}
	before, _ := os.ReadFile(rules) // as saved if the first command compiled
	writes := 0
	for i := range 4 {
		name := "new" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(h, name), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		// A new entry beside ~/.ssh: granted by a patch, at once.
		if out, _, status, _ := s.run("cat "+name, h, wrap...); out != name || status != 0 {
			t.Fatalf("a new file in the home: %q, status %d", out, status)
		}
		if b, _ := os.ReadFile(rules); string(b) != string(before) {
			writes++
			before = b
		}
	}
	// Not 0: a change in the busy /tmp above the home may compile the
	// rules again, which is saved at once.
	if writes > 1 {
		t.Errorf("the rules file was written back %d times in 4 commands whose rules were patched", writes)
	}
	s.in.Close()
	s.cmd.Wait()
	rs, err := ReadRuleset(rules)
	if err != nil {
		t.Fatal(err)
	}
	if !rs.Allows(filepath.Join(h, "new3"), false) {
		t.Error("at the end of the session the patched rules were not written back")
	}
}

// TestServeFailsClosed: rules that cannot be read run nothing.
func TestServeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	s := serve(t)
	wrap := []string{os.Args[0], LaunchArg, RulesFlag, filepath.Join(dir, "missing.rules"), "--"}
	_, errs, status, _ := s.run("touch ran", dir, wrap...)
	if status != LaunchExit || !strings.Contains(errs, "not confined, not run") {
		t.Errorf("missing rules: status %d, stderr %q", status, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
	// A bad request: the marker still comes, the server goes on.
	io.WriteString(s.in, "bad - 1 'unterminated\n")
	if _, errs, status, _ := s.read("bad"); status != LaunchExit || !strings.Contains(errs, "bad request") {
		t.Errorf("bad request: status %d, %q", status, errs)
	}
	if out, _, _, _ := s.run("echo still", dir); out != "still\n" {
		t.Errorf("after a bad request: %q", out)
	}
}

// TestServeCommandThatCannotStart: rules under which the shell itself
// cannot be executed fail the request with LaunchExit, and the server
// goes on.
func TestServeCommandThatCannotStart(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "none.rules")
	if err := WriteRuleset(rules, Compile(Spec{Readable: []string{dir}})); err != nil { // /bin/sh is not in it
		t.Fatal(err)
	}
	s := serve(t)
	for i := 0; i < 2; i++ { // the second finds no shell started ahead either
		_, errs, status, _ := s.run("touch ran", dir, os.Args[0], LaunchArg, RulesFlag, rules, "--")
		if status != LaunchExit || !strings.Contains(errs, LaunchPrefix) || !strings.Contains(errs, "permission denied") {
			t.Errorf("a shell the rules do not let start: status %d, stderr %q", status, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
	if out, _, _, _ := s.run("echo still", dir); out != "still\n" {
		t.Errorf("afterwards: %q", out)
	}
}

func TestParseRequest(t *testing.T) {
	for _, words := range [][]string{{""}, {"a b", "", "it's", "x\ny\n", "\n"}, {"'", `\`, `"$agent_nl"`}} {
		got, err := ParseRequest(quoteRequest(words...))
		if err != nil || !slices.Equal(got, words) {
			t.Errorf("%q: got %q, %v", words, got, err)
		}
	}
	for _, bad := range []string{"a", "'a' ", " 'a'", "'a'  'b'", "'a", `'a'\`, `"x"`, `'a'"$agent_n`} {
		if got, err := ParseRequest(bad); err == nil {
			t.Errorf("%q: no error (%q)", bad, got)
		}
	}
}

// TestRequestHead: the head of a request handed to a shell started ahead
// is its first words, exactly, whatever they hold.
func TestRequestHead(t *testing.T) {
	words := []string{"echo 'a b'", "", "0123abcd", "/launcher path", "-rules", "x\ny", "--"}
	line := quoteRequest(words...)
	got, ends, err := parseRequest(line)
	if err != nil || !slices.Equal(got, words) {
		t.Fatalf("got %q, %v", got, err)
	}
	for n := 1; n <= len(words)+1; n++ {
		head := requestHead(line, ends, n)
		hw, err := ParseRequest(head)
		if err != nil || !slices.Equal(hw, words[:min(n, len(words))]) {
			t.Errorf("head %d %q: %q, %v", n, head, hw, err)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add("a b\nc", "it's")
	f.Add("", `\"$agent_nl"`)
	f.Fuzz(func(t *testing.T, a, b string) {
		got, err := ParseRequest(quoteRequest(a, b))
		if err != nil || !slices.Equal(got, []string{a, b}) {
			t.Fatalf("%q %q: got %q, %v", a, b, got, err)
		}
		line := quoteRequest(a, b, a)
		_, ends, err := parseRequest(line)
		if err != nil || len(ends) != 3 {
			t.Fatalf("%q: ends %v, %v", line, ends, err)
		}
		if head, err := ParseRequest(requestHead(line, ends, 2)); err != nil || !slices.Equal(head, []string{a, b}) {
			t.Fatalf("%q: head %q, %v", line, head, err)
		}
		ParseRequest(a + b) // never panics
	})
}

// TestServeStartsAhead: the next command's shell is started as soon as a
// command ends, confined as it was, and takes the next request of the
// same confinement; not after a request with NEXT 0, nor for a request
// confined otherwise or too long for the pipe.
func TestServeStartsAhead(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "safe.rules")
	if err := WriteRuleset(rules, Compile(Spec{Devices: []string{"/dev/null"}})); err != nil {
		t.Fatal(err)
	}
	confinedWrap := []string{os.Args[0], LaunchArg, RulesFlag, rules, "--"}
	s := serve(t)
	// The age of the command's shell in clock ticks, after 300 ms idle.
	const probe = `read -r up _ </proc/uptime; set -- $(cat /proc/$$/stat); shift 21; echo $(( ${up%.*}${up#*.} - $1 ))`
	age := func(next string, wrap ...string) int {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		out, errs, _, _ := s.runNext(next, probe, dir, wrap...)
		n, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("%q %q", out, errs)
		}
		return n
	}
	long := strings.Repeat("x", aheadMax)
	for i, tc := range []struct {
		next  string
		wrap  []string
		ahead bool
	}{
		{"1", nil, false}, // the first: nothing started yet
		{"1", nil, true},
		{"0", nil, true},  // started after the previous one
		{"1", nil, false}, // none after NEXT 0
		{"1", confinedWrap, false},
		{"1", confinedWrap, true},
		{"1", nil, false},
	} {
		if ahead := age(tc.next, tc.wrap...) >= 25; ahead != tc.ahead {
			t.Errorf("command %d: started ahead %v, want %v", i, ahead, tc.ahead)
		}
	}
	if out, _, _, _ := s.run("echo ${#1}", dir); out != "0\n" {
		t.Errorf("got %q", out)
	}
	if out, _, status, _ := s.run(": "+long+"; echo long", dir); out != "long\n" || status != 0 {
		t.Errorf("a long request: %q, status %d", out, status)
	}
	if out, _, _, _ := s.run("echo 'a\nb'", dir, confinedWrap...); out != "a\nb\n" {
		t.Errorf("a newline through the pipe: %q", out)
	}
}

// TestServeResistsItsCommands: a command confined at the medium level —
// which may write outside the protected hierarchies, /proc included —
// cannot reach the unconfined worker that started it: not its standard
// input (a forged request would run unconfined), not its memory, and
// (Landlock ABI ≥ 6) no signal to it.
func TestServeResistsItsCommands(t *testing.T) {
	needLandlock(t)
	_, spec := home(t, NoProtected)
	spec.Caps = CapsNoSystem // as a medium step's: root keeps no CAP_SYS_PTRACE
	dir := t.TempDir()
	rules := filepath.Join(dir, "medium.rules")
	if err := WriteRuleset(rules, Compile(spec)); err != nil {
		t.Fatal(err)
	}
	wrap := []string{os.Args[0], LaunchArg, RulesFlag, rules, "--"}
	s := serve(t)
	if _, _, status, _ := s.run("echo x > medium-wrote", dir, wrap...); status != 0 {
		t.Fatal("the medium level cannot write where it may: the test proves nothing")
	}
	forged := "x - 1 " + quoteRequest("touch "+dir+"/pwned", dir, "P") + "\n"
	// Each tried as the first command too: the one most likely to share
	// its domain with a thread of the worker (the thread that forked it).
	attacks := []string{
		"exec 3<>/proc/$PPID/mem",
		"for m in /proc/$PPID/task/*/mem; do exec 3<>$m && exit 0; done; exit 1",
		"exec 3</proc/$PPID/mem",
		"cat /proc/$PPID/environ",
		"printf '%s' " + quoteRequest(forged) + " > /proc/$PPID/fd/0",
	}
	if ABI() >= 6 {
		// Signal 0: the permission, without stopping the worker the test
		// talks to; to every thread too (the one that forked the command
		// shares its domain while it lives: the command is held until it
		// has ended).
		attacks = append(attacks, "kill -0 $PPID", "for t in /proc/$PPID/task/*; do kill -0 ${t##*/} && exit 0; done; exit 1")
	}
	for _, cmd := range attacks {
		s := serve(t)
		for i := range 2 {
			if out, errs, status, _ := s.run(cmd, dir, wrap...); status == 0 {
				t.Errorf("%s (command %d): status 0 (%q %q)", cmd, i+1, out, errs)
			}
		}
	}
	if out, _, _, _ := s.run("echo alive", dir); out != "alive\n" {
		t.Errorf("the worker after the attempts: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a forged request ran")
	}
}
