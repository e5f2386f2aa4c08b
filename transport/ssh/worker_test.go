package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

func runOK(t *testing.T, tr *Transport, c transport.Command) transport.Result {
	t.Helper()
	res, err := tr.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run(%q): %v", c.Command, err)
	}
	return res
}

// Commands without stdin share one worker shell: their parent process is
// the same; a command with stdin gets a session (and sshd parent) of its own.
func TestWorkerRunsSuccessiveCommands(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	first := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout
	for range 3 {
		if got := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout; got != first {
			t.Fatalf("parent changed from %q to %q: not run by the worker", first, got)
		}
	}
	withStdin := runOK(t, tr, transport.Command{Command: "cat >/dev/null; echo $PPID", Stdin: strings.NewReader("x")}).Stdout
	if withStdin == first {
		t.Errorf("a command with stdin ran in the worker (parent %s)", first)
	}
	// Shell state does not leak from one command to the next.
	runOK(t, tr, transport.Command{Command: "cd /; X=leak; export Y=leak; umask 077"})
	if got := runOK(t, tr, transport.Command{Command: `echo "$PWD ${X:-} ${Y:-} $(umask) $# ${agent_cmd:-}"`}).Stdout; got != h.Home+"   0022 0 \n" {
		t.Errorf("state leaked between commands: %q", got)
	}
}

// A command that leaves a background process writing to its output returns
// at once, and what that process prints later is not taken for the output of
// the next command.
func TestWorkerBackgroundOutputDoesNotLeak(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	start := time.Now()
	// The background process prints 3 s later: returning before that is
	// the property (a liveness margin, not a speed target), and the next
	// commands run until after it printed.
	res := runOK(t, tr, transport.Command{Command: "(sleep 3; echo late; echo late >&2) & echo now"})
	if res.Stdout != "now\n" {
		t.Errorf("stdout = %q", res.Stdout)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("waited %v for a background process", d)
	}
	deadline := start.Add(3500 * time.Millisecond)
	for time.Now().Before(deadline) {
		res := runOK(t, tr, transport.Command{Command: "echo next; echo err >&2"})
		if res.Stdout != "next\n" || res.Stderr != "err\n" {
			t.Fatalf("next command got %q / %q", res.Stdout, res.Stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A command that kills the worker shell fails alone; the connection and the
// next command are fine.
func TestWorkerKilledByItsCommand(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	runOK(t, tr, transport.Command{Command: "true"})
	_, err := tr.Run(context.Background(), transport.Command{Command: "echo x; kill -9 $PPID; sleep 0.2"})
	if err == nil || errors.Is(err, transport.ErrConnection) || !strings.Contains(err.Error(), "shell running it was killed") {
		t.Errorf("err = %v", err)
	}
	if res := runOK(t, tr, transport.Command{Command: "echo fine"}); res.Stdout != "fine\n" {
		t.Errorf("next command: %q", res.Stdout)
	}
}

// A host with setsid(1) but no bash runs the worker under /bin/sh: commands
// still share it, and a timeout still kills exactly the command's group.
func TestWorkerSetsidWithoutBash(t *testing.T) {
	bin := t.TempDir()
	marker := filepath.Join(bin, fmt.Sprintf("agentsleep%d", time.Now().UnixNano()))
	for link, target := range map[string]string{filepath.Join(bin, "setsid"): "setsid", marker: "sleep"} {
		p, err := exec.LookPath(target)
		if err != nil {
			t.Skipf("no %s here", target)
		}
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin) // no bash: the worker is /bin/sh with setsid
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	var warns warnings
	tr := dial(t, hostConfig(srv.Host), Options{Warn: warns.warn})
	first := runOK(t, tr, transport.Command{Command: "echo $PPID; echo ${BASH_VERSION:-nobash}"}).Stdout
	if got := runOK(t, tr, transport.Command{Command: "echo $PPID; echo ${BASH_VERSION:-nobash}"}).Stdout; got != first || !strings.HasSuffix(got, "nobash\n") {
		t.Fatalf("second command %q, first %q: not the same /bin/sh worker", got, first)
	}
	_, err := tr.Run(context.Background(), transport.Command{Command: marker + " 1000 & " + marker + " 1001", Timeout: 300 * time.Millisecond})
	if !errors.Is(err, transport.ErrTimeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for exec.Command("pgrep", "-f", marker).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the command's processes survived the timeout")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w := warns.String(); w != "" {
		t.Errorf("warnings: %q", w)
	}
}

// A host with neither bash nor setsid(1) gets one session per command, with
// a warning.
func TestWorkerFallbackWithoutSetsid(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // the in-process server's commands inherit it
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	var warns warnings
	tr := dial(t, hostConfig(srv.Host), Options{Warn: warns.warn})
	for range 3 {
		if res := runOK(t, tr, transport.Command{Command: "echo hi; exit 4"}); res.Stdout != "hi\n" || res.ExitCode != 4 {
			t.Fatalf("got %+v", res)
		}
	}
	if w := warns.String(); strings.Count(w, "one session each") != 1 {
		t.Errorf("warnings = %q, want one about sessions", w)
	}
}

func TestDemux(t *testing.T) {
	nonce := []byte("0123456789abcdef")
	for _, tc := range []struct {
		name   string
		chunks []string
		out    string
		rest   string
	}{
		{"one write", []string{"hello\n0123456789abcdef:0:0\n"}, "hello\n", ":0:0"},
		{"no newline before marker", []string{"abc0123456789abcdef:3:1\n"}, "abc", ":3:1"},
		{"marker split", []string{"ab0123", "456789ab", "cdef:1", ":0\n"}, "ab", ":1:0"},
		{"false start", []string{"0123x", "01234567", "89abcdef:0:0\n"}, "0123x", ":0:0"},
		{"output that ends like a nonce start", []string{"x0", "1", "2zz\n", "0123456789abcdef:0:0\n"}, "x012zz\n", ":0:0"},
		{"trailing stray", []string{"a0123456789abcdef:0:0\nSTRAY"}, "a", ":0:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d demux
			var out bytes.Buffer
			var rest string
			calls := 0
			d.expect(nonce, &out, func(r string) { rest = r; calls++ })
			for _, c := range tc.chunks {
				if n, err := d.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			d.Write([]byte("after the marker: dropped"))
			if out.String() != tc.out || rest != tc.rest || calls != 1 {
				t.Errorf("out %q rest %q calls %d; want %q %q 1", out.String(), rest, calls, tc.out, tc.rest)
			}
		})
	}
}

// FuzzDemux: any output, cut into any chunks, comes through byte for byte
// before the marker, which is found exactly once.
func FuzzDemux(f *testing.F) {
	f.Add([]byte("hello world\n"), []byte{3, 1, 7})
	f.Add([]byte("0123456789abcde"), []byte{1})
	f.Add([]byte{}, []byte{})
	nonce := []byte("0123456789abcdef")
	f.Fuzz(func(t *testing.T, output, cuts []byte) {
		if bytes.Contains(output, nonce) {
			return // real output cannot hold a fresh random nonce
		}
		stream := append(append(append([]byte{}, output...), nonce...), ":7:0\nstray"...)
		var d demux
		var out bytes.Buffer
		var rest string
		calls := 0
		d.expect(nonce, &out, func(r string) { rest = r; calls++ })
		for i := 0; len(stream) > 0; i++ {
			n := len(stream)
			if i < len(cuts) {
				n = min(n, int(cuts[i])+1)
			}
			d.Write(stream[:n])
			stream = stream[n:]
		}
		if !bytes.Equal(out.Bytes(), output) || calls != 1 || rest != ":7:0" {
			t.Fatalf("out %q (want %q) rest %q calls %d", out.Bytes(), output, rest, calls)
		}
	})
}

// Markers expected in turn (a request pipelined behind a served worker's
// hello): output after the first marker, in the same write, goes to the
// second's writer; a close releases both waiters.
func TestDemuxQueue(t *testing.T) {
	var d demux
	var first, second bytes.Buffer
	got := make(chan string, 3)
	d.expect([]byte("0123456789abcdef"), &first, func(r string) { got <- "1" + r })
	d.expect([]byte("fedcba9876543210"), &second, func(r string) { got <- "2" + r })
	d.Write([]byte("a0123456789abcdef:0:0\nout\nfedcba98"))
	d.Write([]byte("76543210:3:0\nstray"))
	if a, b := <-got, <-got; a != "1:0:0" || b != "2:3:0" || first.String() != "a" || second.String() != "out\n" {
		t.Errorf("markers %q %q, outputs %q %q", a, b, first.String(), second.String())
	}
	d.expect([]byte("0123456789abcdef"), &first, func(r string) { got <- "1" + r })
	d.expect([]byte("fedcba9876543210"), &second, func(r string) { got <- "2" + r })
	d.close()
	if a, b := <-got, <-got; a != "1" || b != "2" {
		t.Errorf("after close: %q %q", a, b)
	}
}

// A stream that ends before its marker releases the waiter (no goroutine
// is left waiting for a worker that died), also when it ended first.
func TestDemuxCloseReleases(t *testing.T) {
	var d demux
	var out bytes.Buffer
	got := make(chan string, 2)
	d.expect([]byte("0123456789abcdef"), &out, func(r string) { got <- r })
	d.Write([]byte("partial 0123"))
	d.close()
	if r := <-got; r != "" || out.String() != "partial 0123" {
		t.Errorf("after close: rest %q, out %q", r, out.String())
	}
	d.expect([]byte("0123456789abcdef"), &out, func(r string) { got <- r })
	if r := <-got; r != "" {
		t.Errorf("expect on a closed stream: rest %q", r)
	}
}

func TestParseMarker(t *testing.T) {
	for in, want := range map[string]struct {
		code int
		bg   bool
		ok   bool
	}{
		":0:0": {0, false, true}, ":137:1": {137, true, true}, "": {-1, true, false},
		":x:0": {-1, true, false}, "0:0": {-1, true, false}, ":1:0:0": {-1, true, false},
		notRunMarker: {-1, true, false}, // never a status: answered not run before it is parsed
	} {
		code, bg, err := parseMarker(in)
		if code != want.code || bg != want.bg || (err == nil) != want.ok {
			t.Errorf("parseMarker(%q) = %d, %v, %v", in, code, bg, err)
		}
	}
}

func BenchmarkRunTrue(b *testing.B) {
	srv, err := testenv.NewSSHServer(testenv.SSHServerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tr, err := Dial(context.Background(), hostConfig(srv.Host), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	for _, mode := range []string{"worker", "session"} {
		b.Run(mode, func(b *testing.B) {
			c := transport.Command{Command: "true"}
			if mode == "session" {
				c.Stdin = strings.NewReader("")
			}
			for b.Loop() {
				if c.Stdin != nil {
					c.Stdin = strings.NewReader("")
				}
				if _, err := tr.Run(context.Background(), c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	_ = os.Stderr
}

// On a slow link a timeout can fire before the wrapper's PID line arrived:
// the kill must still reach the whole process group, on the worker path and
// on the session path (a command with stdin), against real sshd.
func TestTimeoutBeforePIDArrives(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	cfg, proxy := viaProxy(t, h.Host)
	tr := dial(t, cfg, Options{})
	runOK(t, tr, transport.Command{Command: "true"}) // worker up
	proxy.SetDelay(40 * time.Millisecond)
	bin := t.TempDir()
	for i, stdin := range []bool{false, true} {
		marker := filepath.Join(bin, fmt.Sprintf("agentslow%d_%d", i, time.Now().UnixNano()))
		sleepPath, err := exec.LookPath("sleep")
		if err != nil {
			t.Skip("no sleep")
		}
		if err := os.Symlink(sleepPath, marker); err != nil {
			t.Fatal(err)
		}
		c := transport.Command{Command: marker + " 1000 & " + marker + " 1001", Timeout: 10 * time.Millisecond}
		if stdin {
			c.Stdin = strings.NewReader("")
		}
		if _, err := tr.Run(context.Background(), c); !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("stdin=%v: err = %v, want timeout", stdin, err)
		}
		waitGone(t, marker) // the command's processes, though the timeout came before its PID
	}
}

// Steps that leave background processes attached to their output (`srv &`)
// must not starve the connection of sessions: each returns at once, a warning
// says why it is a bad idea, and later commands still run.
func TestBackgroundStepsDoNotStarveSessions(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	var warns warnings
	tr := dial(t, hostConfig(h.Host), Options{Warn: warns.warn})
	marker := fmt.Sprintf("agentbg%d", time.Now().UnixNano())
	t.Cleanup(func() { exec.Command("pkill", "-f", marker).Run() })
	for i := range 10 {
		start := time.Now()
		res := runOK(t, tr, transport.Command{Command: fmt.Sprintf("sh -c 'sleep 5; : %s' & echo started", marker), Timeout: 3 * time.Second})
		if res.Stdout != "started\n" || time.Since(start) > 2*time.Second {
			t.Fatalf("step %d: %q after %v", i, res.Stdout, time.Since(start))
		}
	}
	for _, stdin := range []bool{false, true} {
		c := transport.Command{Command: "echo still here", Timeout: 3 * time.Second}
		if stdin {
			c.Stdin = strings.NewReader("")
		}
		if res := runOK(t, tr, c); res.Stdout != "still here\n" {
			t.Errorf("stdin=%v: %q", stdin, res.Stdout)
		}
	}
	if !strings.Contains(warns.String(), "nohup") {
		t.Errorf("no warning about background processes: %q", warns.String())
	}
}

// Under bash 4+ a command runs in a /bin/sh the worker started ahead, as
// soon as the previous command had ended: its shell is older than the
// request. The worker leaks no descriptors from one command to the next,
// and a request too long to hand over (workerPipedMax) starts a shell of
// its own and leaves the waiting one for the next command.
func TestWorkerShellStartedAhead(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	// ageOf runs script, which ends by printing the age of its shell in
	// clock ticks (/proc), after 300 ms without commands.
	const age = `read -r up _ </proc/uptime; set -- $(cat /proc/$$/stat); shift 21; echo $(( ${up%.*}${up#*.} - $1 ))`
	ageOf := func(script string) int {
		time.Sleep(300 * time.Millisecond)
		out := runOK(t, tr, transport.Command{Command: script}).Stdout
		n, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("age: %q", out)
		}
		return n
	}
	fds := func() string {
		return runOK(t, tr, transport.Command{Command: "ls /proc/$PPID/fd | wc -l"}).Stdout
	}
	before := fds()
	for range 20 {
		runOK(t, tr, transport.Command{Command: "true"})
	}
	if after := fds(); after != before {
		t.Errorf("the worker's descriptors went from %s to %s over 20 commands", strings.TrimSpace(before), strings.TrimSpace(after))
	}
	if n := ageOf(age); n < 25 {
		t.Errorf("the command's shell is %d ticks old: not started ahead", n)
	}
	if n := ageOf(strings.Repeat(": padding\n", workerPipedMax/10+1) + age); n >= 20 {
		t.Errorf("a request longer than workerPipedMax ran in a shell %d ticks old, want a fresh one", n)
	}
	if n := ageOf(age); n < 25 {
		t.Errorf("after a long request the command's shell is %d ticks old: the waiting shell was lost", n)
	}
}

// A command whose Wrap may start ahead (transport.Command.Ahead) runs, from
// the second one on, in a shell started under that Wrap before it came; a
// command with another Wrap, with none, or with the same Wrap without Ahead
// never runs in a shell started under another Wrap. A Wrap that fails when
// started ahead leaves the command to a fresh start, and the worker serves on.
func TestWorkerShellStartedAheadUnderItsWrap(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	// The wrapper's variable and the age of the command's shell in clock
	// ticks (/proc), after 300 ms without commands.
	const probe = `read -r up _ </proc/uptime; set -- $(cat /proc/$$/stat); shift 21; echo "${AGENT_AHEAD:-none} $(( ${up%.*}${up#*.} - $1 )) $PPID"`
	run := func(c transport.Command) (string, int, string) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		c.Command = probe
		out := runOK(t, tr, c)
		var v, ppid string
		var age int
		if _, err := fmt.Sscan(out.Stdout, &v, &age, &ppid); err != nil {
			t.Fatalf("%q (stderr %q): %v", out.Stdout, out.Stderr, err)
		}
		return v, age, ppid
	}
	wrap := func(v string, ahead bool) transport.Command {
		return transport.Command{Wrap: []string{"env", "AGENT_AHEAD=" + v}, Ahead: ahead}
	}
	_, _, worker := run(transport.Command{})
	for i, tc := range []struct {
		c      transport.Command
		want   string
		before bool // run in a shell started before the command
	}{
		{wrap("1", true), "1", true}, // the unwrapped shell waiting, then env
		{wrap("1", true), "1", true}, // the shell started under env
		{transport.Command{}, "none", false},
		{wrap("1", true), "1", true},
		{wrap("2", true), "2", false}, // not the shell started under AGENT_AHEAD=1
		{wrap("2", true), "2", true},
		{wrap("2", false), "2", false}, // the same Wrap, not Ahead: a fresh start
		{transport.Command{}, "none", true},
	} {
		v, age, ppid := run(tc.c)
		if v != tc.want || ppid != worker {
			t.Errorf("command %d: AGENT_AHEAD %s (worker %s), want %s (worker %s)", i, v, ppid, tc.want, worker)
		}
		if before := age >= 25; before != tc.before {
			t.Errorf("command %d: its shell is %d ticks old, want started ahead %v", i, age, tc.before)
		}
	}
	// A wrapper that fails when started ahead: each command starts afresh.
	for range 3 {
		time.Sleep(100 * time.Millisecond)
		res := runOK(t, tr, transport.Command{Command: "echo never", Wrap: []string{"false"}, Ahead: true})
		if res.ExitCode != 1 || res.Stdout != "" {
			t.Errorf("under false: %+v", res)
		}
	}
	if _, _, ppid := run(transport.Command{}); ppid != worker {
		t.Errorf("after a failing wrapper the worker changed: %s, was %s", ppid, worker)
	}
}

// After a command run as a plan's last step (transport.WithLastStep) the
// worker starts no shell ahead: a command that comes anyway runs in a
// fresh shell, as the worker's first would. Without the mark, the next
// command's shell is started ahead as before, and the worker serves on.
func TestWorkerNoShellAheadAfterLastStep(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	const age = `read -r up _ </proc/uptime; set -- $(cat /proc/$$/stat); shift 21; echo $(( ${up%.*}${up#*.} - $1 )) $PPID`
	ageOf := func(ctx context.Context) (int, string) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		res, err := tr.Run(ctx, transport.Command{Command: age})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		var ppid string
		if _, err := fmt.Sscan(res.Stdout, &n, &ppid); err != nil {
			t.Fatalf("age: %q: %v", res.Stdout, err)
		}
		return n, ppid
	}
	last := transport.WithLastStep(context.Background())
	_, worker := ageOf(context.Background())
	if n, _ := ageOf(last); n < 25 {
		t.Errorf("the last step's own shell is %d ticks old: it should have been started ahead", n)
	}
	if n, ppid := ageOf(context.Background()); n >= 20 || ppid != worker {
		t.Errorf("after the last step the next command's shell is %d ticks old (worker %s, was %s): a shell was started ahead", n, ppid, worker)
	}
	if n, ppid := ageOf(context.Background()); n < 25 || ppid != worker {
		t.Errorf("then the shell is %d ticks old (worker %s, was %s): not started ahead again", n, ppid, worker)
	}
}

// The login shell execs bash itself where the host has bash (no /bin/sh
// in between: workerCommands[0]); a host without bash gets the portable
// chain (workerCommands[1]) and a /bin/sh worker, with no warning.
func TestWorkerStartedByTheLoginShell(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	out := runOK(t, tr, transport.Command{Command: `cat /proc/$PPID/comm`}).Stdout
	if w := workerOf(tr); out != "bash\n" || w == nil || !strings.HasPrefix(workerCommands[w.command], "exec bash ") {
		t.Errorf("worker %q started by %v: want bash exec'd by the login shell", out, commandOf(w))
	}

	bin := t.TempDir()
	p, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid here")
	}
	if err := os.Symlink(p, filepath.Join(bin, "setsid")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin) // no bash
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	var warns warnings
	tr = dial(t, hostConfig(srv.Host), Options{Warn: warns.warn})
	out = runOK(t, tr, transport.Command{Command: `echo ${BASH_VERSION:-nobash}`}).Stdout
	if w := workerOf(tr); out != "nobash\n" || w == nil || !strings.HasPrefix(workerCommands[w.command], "exec /bin/sh ") {
		t.Errorf("without bash: %q, worker started by %v: want /bin/sh started by the portable chain", out, commandOf(w))
	}
	if w := warns.String(); w != "" {
		t.Errorf("warnings: %q", w)
	}
}

// workerOf is tr's current worker, nil when it has none.
func workerOf(tr *Transport) *worker {
	tr.wmu.Lock()
	defer tr.wmu.Unlock()
	return tr.worker
}

// commandOf is the command that started w, for messages.
func commandOf(w *worker) string {
	if w == nil {
		return "(no worker)"
	}
	return strconv.Quote(workerCommands[w.command])
}

// A long request reaches a bash worker by its length, read in blocks: the
// worker makes far fewer read(2) calls than the request has bytes (bash
// reads a line from a pipe a byte at a time), and the command is run as
// sent: quotes, backslashes, newlines, a non-ASCII word (that one by the
// line). A /bin/sh worker gets it by the line.
func TestWorkerLongRequestByLength(t *testing.T) {
	long := func(n int, extra string) (cmd, want string) {
		var c, w strings.Builder
		for i := 0; c.Len() < n; i++ {
			word := fmt.Sprintf(`a'b"c\d$x%d`, i)
			fmt.Fprintf(&c, "printf '%%s\\n' %s\n", shellQuote(word))
			w.WriteString(word + "\n")
		}
		c.WriteString("printf '%s\\n' " + shellQuote(extra))
		return c.String(), w.String() + extra + "\n"
	}
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	reads := func() int {
		out := runOK(t, tr, transport.Command{Command: `while read -r k v; do [ "$k" = syscr: ] && echo "$v"; done < /proc/$PPID/io`}).Stdout
		n, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("the worker's read count: %q", out)
		}
		return n
	}
	before := reads()
	if w := workerOf(tr); w == nil || !w.sized {
		t.Fatalf("the bash worker does not read by length")
	}
	cmd, want := long(20000, "end")
	if got := runOK(t, tr, transport.Command{Command: cmd}).Stdout; got != want {
		t.Fatalf("long command's output differs: %d bytes, want %d", len(got), len(want))
	}
	// The read count command's own request: a line of ~100 bytes.
	if n := reads() - before; n > 1000 {
		t.Errorf("the worker made %d reads for a %d-byte request", n, len(cmd))
	}
	cmd, want = long(2000, "é ü")
	if got := runOK(t, tr, transport.Command{Command: cmd}).Stdout; got != want {
		t.Errorf("non-ASCII long command's output differs: %q", got)
	}

	bin := t.TempDir()
	p, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid here")
	}
	if err := os.Symlink(p, filepath.Join(bin, "setsid")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin) // no bash: the worker is /bin/sh
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr = dial(t, hostConfig(srv.Host), Options{})
	cmd, want = long(20000, "end")
	if got := runOK(t, tr, transport.Command{Command: cmd}).Stdout; got != want {
		t.Errorf("/bin/sh worker: long command's output differs")
	}
	if w := workerOf(tr); w == nil || w.sized || w.served != "" {
		t.Errorf("the /bin/sh worker reads by length, or is not the worker")
	}
}

// A worker whose first request is too long for a shell started ahead
// starts none before it (a confined fan-out's first request is the 22 KB
// set-up: the shell would be a fork and an exec wasted on every host): the
// worker's only child is the command's shell. A short first request runs
// in the shell started ahead, as later ones do.
func TestWorkerNoShellAheadBeforeALongFirstRequest(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	children := `read -r c < /proc/$PPID/task/$PPID/children; set -- $c; echo $#`
	for _, pad := range []int{0, workerPipedMax + 100} {
		tr := dial(t, hostConfig(h.Host), Options{})
		cmd := ": " + strings.Repeat("x", pad) + "; " + children
		if got := runOK(t, tr, transport.Command{Command: cmd}).Stdout; got != "1\n" {
			t.Errorf("first request of %d bytes: the worker has %q children, want 1 (its shell alone)", len(cmd), got)
		}
		if got := runOK(t, tr, transport.Command{Command: children}).Stdout; got != "1\n" {
			t.Errorf("after it: %q children, want 1 (the shell started ahead runs it)", got)
		}
	}
}
