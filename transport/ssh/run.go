package ssh

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/transport"
)

const (
	// killTimeout bounds the extra session that kills a process group.
	killTimeout = 5 * time.Second
	// closeWait bounds the wait for a killed session's channel to close.
	closeWait = 2 * time.Second
	// pidWait bounds the wait for a stopped command's process group ID,
	// which its kill needs: the marker that says it comes when the shell
	// has started (a served worker's also after the thread that confined
	// it ended), which a loaded host can take seconds to do. A command
	// stopped before its marker would otherwise run on unkilled. It
	// returns as soon as the marker comes, or the command ends.
	pidWait = 10 * time.Second
	// maxPreamble bounds the stderr held back while looking for the marker.
	maxPreamble = 64 << 10
)

// wrapper runs as `/bin/sh -c wrapper agent CMD DIR NONCE [WRAP...]`. It prints
// "NONCE PID STATUS" on stderr, where PID is its own process ID: sshd runs
// every session in a new session (setsid), and the exec chain keeps the
// PID, so PID is the process group of everything the command starts. Then
// it changes to DIR ("~" and "~/…" mean $HOME) and evaluates the command
// in the same shell, with its own variables unset and no positional
// parameters — as `sh -c CMD` would, minus one exec per step (the exec is a
// measurable part of a step's latency; see bench/). With a WRAP argv
// (transport.Command.Wrap) it execs `WRAP... /bin/sh -c CMD` instead: exec
// keeps the PID, so the process group is still the marker's.
const wrapper = `d=$2; case $d in "~") d=$HOME ;; "~/"*) d=$HOME/${d#"~/"} ;; esac; ` +
	`if [ -n "$d" ] && ! cd -- "$d" 2>/dev/null; then ` +
	`if [ ! -e "$d" ]; then r=noent; elif [ ! -d "$d" ]; then r=notdir; else r=perm; fi; ` +
	`printf '%s %s %s\n' "$3" "$$" "$r" >&2; exit 127; fi; ` +
	`printf '%s %s ok\n' "$3" "$$" >&2; agent_cmd=$1; shift 3; unset d r; ` +
	`if [ $# -gt 0 ]; then exec "$@" /bin/sh -c "$agent_cmd"; fi; eval "unset agent_cmd
$agent_cmd"`

// remoteCommand is the exec request sent to sshd, which hands it to the
// user's login shell: exec replaces that shell with /bin/sh running wrapper.
func remoteCommand(nonce, command, dir string, wrap []string) string {
	return "exec /bin/sh -c " + shellQuote(wrapper) + " sh " +
		shellQuote(command) + " " + shellQuote(dir) + " " + nonce + quoteArgs(wrap)
}

// quoteArgs is args quoted for a POSIX shell, each after a space.
func quoteArgs(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(" ")
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell: in single quotes, each embedded
// quote closed, backslash-escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Run runs cmd.Command with the remote "/bin/sh -c", as transport.Transport
// documents. On timeout or cancellation the session is signalled with KILL,
// the command's whole process group is killed from a second session, and
// the channel is closed.
func (t *Transport) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	if b, i := transport.BatchOf(ctx); b != nil {
		return b.Run(ctx, i, cmd, t.sendBatch)
	}
	return t.run(ctx, cmd)
}

// run is Run of a command alone.
func (t *Transport) run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	fail := func(err error) (transport.Result, error) {
		return transport.Result{}, fmt.Errorf("run %s: %w", brief(cmd.Command), err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if strings.ContainsRune(cmd.Command, 0) || strings.ContainsRune(cmd.Dir, 0) || strings.ContainsRune(strings.Join(cmd.Wrap, ""), 0) {
		return fail(errors.New("command, directory or wrapper contains a NUL byte"))
	}
	if a := transport.AfterStatesOf(ctx); a != nil {
		a.Set(nil) // read after this command, or by the caller
	}
	if cmd.Stdin == nil {
		// Quoted, the request is at least as long as these.
		late := len(cmd.Command)+len(cmd.Dir) > workerPipedMax
		if w := t.takeWorker(ctx, late); w != nil {
			res, err, ok := w.run(ctx, t, cmd)
			t.releaseWorker(w)
			if ok {
				return res, err
			}
		}
	}
	// Waiting for a free session and opening it count against the timeout.
	startCtx := ctx
	if cmd.Timeout > 0 {
		var cancel context.CancelFunc
		startCtx, cancel = context.WithTimeout(ctx, cmd.Timeout)
		defer cancel()
	}
	startFail := func(err error) (transport.Result, error) {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s waiting for a free session", transport.ErrTimeout, cmd.Timeout)
		}
		return fail(err)
	}
	if err := acquire(startCtx, t.sem); err != nil {
		return startFail(err)
	}
	defer func() { <-t.sem }()
	nonce := randomHex(8)
	stdout := transport.NewCapture(cmd.CaptureLimit)
	stderr := transport.NewCapture(cmd.CaptureLimit)
	filter := &markerFilter{prefix: []byte(nonce + " "), out: transport.Tee(stderr, cmd.Stderr),
		started: func(pid int) { transport.Started(ctx, pid) }}
	var c *conn
	var sess *gossh.Session
	closedOnce := false
	for {
		ungate, err := t.gate(startCtx)
		if err != nil {
			return startFail(err)
		}
		defer ungate()
		if c, sess, err = t.session(startCtx); err != nil {
			return startFail(err)
		}
		defer sess.Close()
		req, stdin := execRequest(nonce, cmd, t.execLimit())
		sess.Stdout, sess.Stderr, sess.Stdin = transport.Tee(stdout, cmd.Stdout), filter, stdin
		err = startExec(sess, req)
		if err == nil {
			break
		}
		if errors.Is(err, ErrExecTooLong) {
			return fail(err)
		}
		lost := !c.alive() || !c.ping(closeWait)
		if !lost && t.chanGate != nil && errors.Is(err, io.EOF) && !closedOnce {
			// A gated Dropbear closed the channel before it took the
			// request (gatedDropbear): nothing ran.
			closedOnce = true
			sess.Close()
			ungate()
			continue
		}
		if lost {
			err = t.lostErr(c, err)
		}
		retry, err := t.execFailed(len(req), lost, err)
		if !retry {
			return fail(err)
		}
		sess.Close() // refused: nothing ran; sent again on standard input
		ungate()
	}
	start := time.Now()
	waitc := make(chan error, 1)
	go func() { waitc <- sess.Wait() }()

	var timeout <-chan time.Time
	if cmd.Timeout > 0 {
		timer := time.NewTimer(cmd.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	var werr, stopped error
	select {
	case werr = <-waitc:
	case <-timeout:
		stopped = fmt.Errorf("%w after %s", transport.ErrTimeout, cmd.Timeout)
	case <-ctx.Done():
		stopped = ctx.Err()
	}
	if stopped != nil {
		t.killRemote(c, sess, filter.waitPID(pidWait))
		select {
		case werr = <-waitc:
		case <-time.After(closeWait):
		}
	}
	filter.flush()
	res := transport.Captured(-1, stdout, stderr, time.Since(start))
	if stopped != nil {
		return res, fmt.Errorf("run %s: %w", brief(cmd.Command), stopped)
	}
	if status := filter.status(); status != "" && status != "ok" {
		return fail(dirError(cmd.Dir, status))
	}
	var exit *gossh.ExitError
	switch {
	case werr == nil:
		res.ExitCode = 0
	case errors.As(werr, &exit):
		res.ExitCode = exit.ExitStatus() // 128+N for a signal, as sh reports it
	case !c.alive() || !c.ping(closeWait):
		return res, fmt.Errorf("run %s: %w", brief(cmd.Command), t.lostErr(c, werr))
	}
	// An exit without status on a live connection: ExitCode stays -1.
	return res, nil
}

// session opens a session channel on the current connection.
func (t *Transport) session(ctx context.Context) (*conn, *gossh.Session, error) {
	var s *gossh.Session
	c, err := t.retry(ctx, func(c *conn) error {
		var err error
		s, err = openSession(ctx, c.client)
		if err != nil {
			return fmt.Errorf("open session: %w", err)
		}
		return nil
	})
	return c, s, err
}

// killRemote kills a command that timed out or was cancelled: KILL to the
// session's process (sshd delivers it only to that process), then, from a
// fresh session, KILL to its whole process group (children started in the
// background included), then closing the channel.
func (t *Transport) killRemote(c *conn, sess *gossh.Session, pid int) {
	sess.Signal(gossh.SIGKILL)
	t.killGroup(c, pid)
	sess.Close()
}

// killGroup sends KILL to the process group pid from a fresh session.
func (t *Transport) killGroup(c *conn, pid int) {
	if pid > 1 && c.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		if acquire(ctx, t.kill) == nil {
			if ks, err := openSession(ctx, c.client); err == nil {
				done := make(chan struct{})
				go func() {
					defer close(done)
					// "kill -9 -PGID" is understood by bash, dash and zsh alike.
					if startExec(ks, fmt.Sprintf("kill -9 -%d 2>/dev/null || kill -9 %d 2>/dev/null; true", pid, pid)) == nil {
						ks.Wait()
					}
				}()
				select {
				case <-done:
				case <-ctx.Done():
				}
				ks.Close()
			}
			<-t.kill
		}
		cancel()
	}
}

// ping reports whether the server answers a keepalive within d.
func (c *conn) ping(d time.Duration) bool {
	ch := make(chan error, 1)
	go func() {
		_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
		ch <- err
	}()
	select {
	case err := <-ch:
		return err == nil
	case <-time.After(d):
		return false
	}
}

func dirError(dir, status string) error {
	var err error
	switch status {
	case "noent":
		err = fs.ErrNotExist
	case "notdir":
		err = syscall.ENOTDIR
	default:
		err = fs.ErrPermission
	}
	return &fs.PathError{Op: "chdir", Path: dir, Err: err}
}

// brief is a command shortened for error messages.
func brief(command string) string {
	const max = 60
	if i := strings.IndexByte(command, '\n'); i >= 0 {
		command = command[:i] + " …"
	}
	if len(command) > max {
		command = command[:max] + "…"
	}
	return strconv.Quote(command)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// markerFilter passes stderr through to out, except the wrapper's marker
// line "NONCE PID STATUS", which it parses. Whatever precedes the marker
// (a login shell's noise) is passed through as well; at most maxPreamble
// bytes of an unfinished line are held back.
type markerFilter struct {
	prefix []byte
	out    io.Writer

	mu     sync.Mutex
	buf    []byte
	done   bool
	pidv   int
	statev string
	ready  chan struct{} // closed once the marker was seen or can no longer come
	// started is called with the PID once the marker gave it
	// (transport.Started).
	started func(pid int)
}

// waitPID returns the command's PID (its process group), waiting up to d for
// the marker line: a timeout or Ctrl-C can come before the line crossed a
// slow link, and killing then would miss the group. 0 when it never came.
func (f *markerFilter) waitPID(d time.Duration) int {
	f.mu.Lock()
	if f.ready == nil {
		f.ready = make(chan struct{})
		if f.done {
			close(f.ready)
		}
	}
	ready := f.ready
	f.mu.Unlock()
	select {
	case <-ready:
	case <-time.After(d):
	}
	return f.pid()
}

// finish marks the marker as seen or impossible; f.mu is held.
func (f *markerFilter) finish() {
	f.done = true
	if f.ready != nil {
		select {
		case <-f.ready:
		default:
			close(f.ready)
		}
	}
}

func (f *markerFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return f.out.Write(p)
	}
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		line := f.buf[:i]
		if j := bytes.Index(line, f.prefix); j >= 0 {
			f.parse(line[j+len(f.prefix):])
			f.out.Write(line[:j])
			f.out.Write(f.buf[i+1:])
			f.buf = nil
			f.finish()
			return len(p), nil
		}
		f.out.Write(f.buf[:i+1])
		f.buf = f.buf[i+1:]
	}
	if len(f.buf) > maxPreamble {
		f.out.Write(f.buf)
		f.buf = nil
		f.finish()
	}
	return len(p), nil
}

func (f *markerFilter) parse(rest []byte) {
	pid, status, _ := strings.Cut(string(rest), " ")
	if n, err := strconv.Atoi(pid); err == nil {
		f.pidv = n
		if f.started != nil && status == "ok" {
			f.started(n)
		}
	}
	f.statev = status
}

// flush passes on what is still held back: the stream ended.
func (f *markerFilter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.out.Write(f.buf)
		f.buf = nil
		f.finish()
	}
}

func (f *markerFilter) pid() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pidv
}

func (f *markerFilter) status() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statev
}
