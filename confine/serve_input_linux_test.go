package confine

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// switches is the voluntary context switches of all of pid's threads so
// far (each sleep and wake-up of the runtime's).
func switches(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	n := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == "voluntary_ctxt_switches" { // not preemptions: the load
				c, _ := strconv.Atoi(strings.TrimSpace(v))
				n += c
			}
		}
	}
	return n
}

// stdinFlags is the open flags of pid's fd 0.
func stdinFlags(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/0")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			f, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(f)
		}
	}
	t.Fatal("no flags in fdinfo")
	return 0
}

// A served worker waiting for its next request lets the Go runtime sleep:
// its stdin (a pipe of its own) is read through the poller, not in a
// blocking read(2), which kept the runtime's monitor waking every 20 µs
// to 10 ms after each request — a fan-out host's launcher
// ~3,000 a session.
func TestServeWaitsOnThePoller(t *testing.T) {
	cmd := exec.Command(os.Args[0], LaunchArg, ServeFlag)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(out)
	io.WriteString(in, "hello "+quoteRequest(testWrapper)+"\n")
	io.WriteString(in, "n1 - 1 "+quoteRequest("echo ran", "/", "p")+"\n")
	for _, want := range []string{os.Getenv("HOME") + "\n", "hello:0:0\n", "ran\n", "n1:0:0\n"} {
		if line, err := r.ReadString('\n'); line != want {
			t.Fatalf("got %q (%v), want %q", line, err, want)
		}
	}
	pid := cmd.Process.Pid
	if stdinFlags(t, pid)&syscall.O_NONBLOCK == 0 {
		t.Errorf("the served worker's stdin (a pipe of its own) is blocking")
	}
	// Requests 15 ms apart, as a round trip spaces them: each wait for
	// the next one in a blocking read cost ~60 wake-ups of the monitor
	// (every 20 µs for 1 ms, then less often until it hands the thread's
	// processor off at 10 ms).
	// A busy machine adds switches of its own (a thread waiting for one
	// the load preempted: 261–566 a round at load 6–9, on this session's
	// start too): the fewest of up to five rounds counts, against 450; a
	// blocking read costs ~600 in every round.
	const most = 450
	fewest := -1
	for round := 0; round < 5 && (fewest < 0 || fewest > most); round++ {
		before := switches(t, pid)
		for i := range 10 {
			time.Sleep(15 * time.Millisecond)
			n := "w" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
			io.WriteString(in, n+" - 1 "+quoteRequest(":", "/", "p")+"\n")
			if line, err := r.ReadString('\n'); line != n+":0:0\n" {
				t.Fatalf("got %q (%v)", line, err)
			}
		}
		n := switches(t, pid) - before
		t.Logf("round %d: %d context switches for 10 requests", round+1, n)
		if fewest < 0 || n < fewest {
			fewest = n
		}
	}
	if fewest > most {
		t.Errorf("the served worker's threads switched %d times (the fewest of 5 rounds) for 10 requests 15 ms apart", fewest)
	}
	io.WriteString(in, "n2 - 0 "+quoteRequest("echo again", "/", "p")+"\n")
	for _, want := range []string{"again\n", "n2:0:0\n"} {
		if line, err := r.ReadString('\n'); line != want {
			t.Fatalf("got %q (%v), want %q", line, err, want)
		}
	}
}

// Where stdin and stdout are one socket (O_NONBLOCK is the open file's,
// and the commands write to it), stdin is left blocking, and works.
func TestServeSharedStdinStaysBlocking(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer ours.Close()
	cmd := exec.Command(os.Args[0], LaunchArg, ServeFlag)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	t.Cleanup(func() { ours.Close(); cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(ours)
	io.WriteString(ours, "hello "+quoteRequest(testWrapper)+"\n")
	io.WriteString(ours, "n1 - 0 "+quoteRequest("echo ran", "/", "p")+"\n")
	for _, want := range []string{os.Getenv("HOME") + "\n", "hello:0:0\n", "ran\n", "n1:0:0\n"} {
		if line, err := r.ReadString('\n'); line != want {
			t.Fatalf("got %q (%v), want %q", line, err, want)
		}
	}
	if stdinFlags(t, cmd.Process.Pid)&syscall.O_NONBLOCK != 0 {
		t.Errorf("stdin shared with stdout was made non-blocking")
	}
}
