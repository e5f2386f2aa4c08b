//go:build linux

package local

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A command with nothing on its standard input is started and waited for
// here rather than by os/exec (docs/decisions.md, "A local command without
// os/exec"): its output pipes and its pidfd are polled by the calling
// thread — a local step's confined thread — which reads what comes and
// reaps the command when it ended, with no goroutine on the way when the
// command prints nothing (`true`) and a single one that writes what it
// printed otherwise. os/exec started three goroutines a command (a copy
// of each pipe, the context's watch), registered both pipes with the
// runtime's poller, opened /dev/null for its standard input, and its Wait
// took the pipes' goroutines' news through the scheduler: thread
// hand-offs between a command's end and the next one's start.
//
// The rules are os/exec's as Run used it: the command in its own process
// group, killed (with its group) when ctx ends; its pipes read until they
// close or waitDelay after it ended (a process that left its group may
// hold them); stdin /dev/null.

// rawStarts says that this kernel gives pidfds (clone's CLONE_PIDFD, Linux
// 5.3 for polling them): without them every command goes through os/exec.
var rawStarts = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// devNull is a descriptor of /dev/null for the commands' standard input,
// opened once.
var devNull = sync.OnceValues(func() (int, error) {
	return unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
})

// child is a command started by spawn.
type child struct {
	pid, pidfd   int
	outR, errR   int // the pipes' read ends; -1 once closed
	mu           sync.Mutex
	reaped       bool
	sinkCh       chan chunk
	sinkDone     chan struct{}
	stdout, errw io.Writer
	inline       bool // write on the calling thread (captures only)
}

// chunk is output read from a pipe, for its writer.
type chunk struct {
	w io.Writer
	b *[]byte
	n int
}

// errNoRaw: the command goes through os/exec (Stdin, a wrapper looked up
// in PATH, an environment os/exec would refuse, no pidfds).
var errNoRaw = errors.New("not started without os/exec")

// spawn starts argv[0] at path in dir with env (dedupEnv's), in a new
// process group, stdin /dev/null, its stdout and stderr on pipes read by
// wait.
func spawn(path string, argv, env []string, dir string) (*child, error) {
	if !strings.ContainsRune(path, '/') {
		return nil, errNoRaw
	}
	null, err := devNull()
	if err != nil {
		return nil, errNoRaw
	}
	if dir != "" {
		// As os.StartProcess: a missing directory is named, not a bare ENOENT.
		if _, err := os.Stat(dir); err != nil {
			return nil, &os.PathError{Op: "chdir", Path: dir, Err: errors.Unwrap(err)}
		}
	}
	var po, pe [2]int
	if err := unix.Pipe2(po[:], unix.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	if err := unix.Pipe2(pe[:], unix.O_CLOEXEC); err != nil {
		unix.Close(po[0])
		unix.Close(po[1])
		return nil, os.NewSyscallError("pipe2", err)
	}
	pidfd := -1
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Dir: dir, Env: env,
		Files: []uintptr{uintptr(null), uintptr(po[1]), uintptr(pe[1])},
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	unix.Close(po[1])
	unix.Close(pe[1])
	if err == nil && pidfd < 0 {
		// Started, yet no pidfd: reap it and say so (not expected once
		// pidfds() held).
		var ws unix.WaitStatus
		unix.Kill(-pid, unix.SIGKILL)
		unix.Wait4(pid, &ws, 0, nil)
		err = errors.New("no pidfd")
	}
	if err != nil {
		unix.Close(po[0])
		unix.Close(pe[0])
		return nil, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return &child{pid: pid, pidfd: pidfd, outR: po[0], errR: pe[0]}, nil
}

// dedupEnv is env with each name once (the last), as os/exec passes it;
// false when an entry holds a NUL (os/exec refuses it).
func dedupEnv(env []string) ([]string, bool) {
	seen := make(map[string]bool, len(env))
	dup := false
	for _, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, false
		}
		k, _, _ := strings.Cut(kv, "=")
		if seen[k] {
			dup = true
		}
		seen[k] = true
	}
	if !dup {
		return env, true
	}
	out := make([]string, 0, len(env))
	clear(seen)
	for i := len(env) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(env[i], "=")
		if !seen[k] {
			seen[k] = true
			out = append(out, env[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, true
}

// kill ends the command and its group, unless it was reaped (its PID may
// be another's by now).
func (c *child) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return
	}
	unix.Kill(-c.pid, unix.SIGKILL)
	unix.PidfdSendSignal(c.pidfd, unix.SIGKILL, nil, 0)
}

// wait reads the command's output into stdout and stderr until both pipes
// closed (or waitDelay after it ended), and reaps it: its status. ctx's
// end kills it and its group. stdout and stderr are written on this
// thread when inline, else by one goroutine started at the first output.
func (c *child) wait(ctx context.Context, stdout, stderr io.Writer, inline bool) (unix.WaitStatus, error) {
	c.stdout, c.errw, c.inline = stdout, stderr, inline
	stop := context.AfterFunc(ctx, c.kill)
	defer stop()
	defer c.closeSink()
	fds := []unix.PollFd{
		{Fd: int32(c.outR), Events: unix.POLLIN},
		{Fd: int32(c.errR), Events: unix.POLLIN},
		{Fd: int32(c.pidfd), Events: unix.POLLIN},
	}
	var ws unix.WaitStatus
	var deadline time.Time
	var err error
	for fds[0].Fd >= 0 || fds[1].Fd >= 0 || fds[2].Fd >= 0 {
		timeout := -1
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				// Its pipes held past waitDelay (a process that left its
				// group): what is in them is read, what comes later is
				// not. The deadline bounds the wait for more, never the
				// reading of what the command wrote (a reader behind on
				// a loaded machine lost the end of the output, and with
				// it half a secret the redactor no longer knew).
				for i, w := range [2]io.Writer{c.stdout, c.errw} {
					if fds[i].Fd >= 0 && unix.SetNonblock(int(fds[i].Fd), true) == nil {
						for got := 0; got < maxDrain; {
							n := c.read(int(fds[i].Fd), w)
							if n <= 0 {
								break
							}
							got += n
						}
					}
				}
				break
			}
			timeout = int(left/time.Millisecond) + 1
		}
		if _, perr := unix.Poll(fds, timeout); perr != nil {
			if perr == unix.EINTR {
				continue
			}
			err = os.NewSyscallError("poll", perr)
			c.kill()
			break
		}
		for i, w := range [2]io.Writer{c.stdout, c.errw} {
			if fds[i].Fd < 0 || fds[i].Revents == 0 {
				continue
			}
			if c.read(int(fds[i].Fd), w) <= 0 {
				unix.Close(int(fds[i].Fd))
				fds[i].Fd = -1
			}
		}
		if fds[2].Fd >= 0 && fds[2].Revents != 0 {
			c.mu.Lock()
			_, werr := unix.Wait4(c.pid, &ws, unix.WNOHANG, nil)
			for werr == unix.EINTR {
				_, werr = unix.Wait4(c.pid, &ws, unix.WNOHANG, nil)
			}
			c.reaped = true
			c.mu.Unlock()
			fds[2].Fd = -1
			if werr != nil && err == nil {
				err = os.NewSyscallError("wait4", werr)
			}
			deadline = time.Now().Add(waitDelay)
		}
	}
	for _, fd := range fds[:2] {
		if fd.Fd >= 0 {
			unix.Close(int(fd.Fd))
		}
	}
	if !c.reaped {
		// Left the loop on a poll error: the command was killed; reap it.
		c.mu.Lock()
		_, werr := unix.Wait4(c.pid, &ws, 0, nil)
		for werr == unix.EINTR {
			_, werr = unix.Wait4(c.pid, &ws, 0, nil)
		}
		c.reaped = true
		c.mu.Unlock()
	}
	unix.Close(c.pidfd)
	return ws, err
}

// read passes what one read of fd gives to w: how many bytes, 0 at the
// end (or an error, EAGAIN included: the pipe is dropped).
func (c *child) read(fd int, w io.Writer) int {
	bp := copyBufs.Get().(*[]byte)
	n, err := unix.Read(fd, *bp)
	for err == unix.EINTR {
		n, err = unix.Read(fd, *bp)
	}
	if n <= 0 {
		copyBufs.Put(bp)
		return 0
	}
	if c.inline {
		w.Write((*bp)[:n])
		copyBufs.Put(bp)
		return n
	}
	if c.sinkCh == nil {
		c.sinkCh, c.sinkDone = make(chan chunk, 4), make(chan struct{})
		go drain(c.sinkCh, c.sinkDone)
	}
	c.sinkCh <- chunk{w: w, b: bp, n: n}
	return n
}

// drain writes the chunks to their writers, in order, off the thread
// that reads them (a confined thread must not run agent's own work).
func drain(ch <-chan chunk, done chan<- struct{}) {
	defer close(done)
	for c := range ch {
		c.w.Write((*c.b)[:c.n])
		copyBufs.Put(c.b)
	}
}

// closeSink waits until what was read has been written.
func (c *child) closeSink() {
	if c.sinkCh != nil {
		close(c.sinkCh)
		<-c.sinkDone
	}
}

// exitStatus is ws as a shell reports it: 128+N for death by signal N.
func exitStatus(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
