package confine

import (
	"os"

	"golang.org/x/sys/unix"
)

// The served worker waits for its requests through Go's poller, not in a
// blocking read(2): a thread blocked in a system call keeps the runtime's
// monitor waking every 20 µs to 10 ms (a warm fan-out host paid ~3,000
// wake-ups a session in each launcher, most of its threads' CPU: the
// worker waits for a request a round trip each step), while a process
// whose goroutines all wait on the poller lets it sleep. Its commands'
// wait4 stays blocking: a pidfd through the poller links ~8 KB
// (os.File.SyscallConn) for little (commands are short).

// serveInput is the served worker's standard input, read through the
// poller when fd 0 is a pipe or socket of its own: O_NONBLOCK is the open
// file's, so not when fd 1 or 2 is the same file (a socketpair for
// stdin and stdout), whose writers — the commands — must keep blocking.
func serveInput() *os.File {
	var in, out, errs unix.Stat_t
	if unix.Fstat(0, &in) != nil || unix.Fstat(1, &out) != nil || unix.Fstat(2, &errs) != nil {
		return os.Stdin
	}
	if m := in.Mode & unix.S_IFMT; m != unix.S_IFIFO && m != unix.S_IFSOCK {
		return os.Stdin
	}
	same := func(o *unix.Stat_t) bool { return o.Dev == in.Dev && o.Ino == in.Ino }
	if same(&out) || same(&errs) || unix.SetNonblock(0, true) != nil {
		return os.Stdin
	}
	return os.NewFile(0, "/dev/stdin")
}
