package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

// killGrace is how long, after a command's process group was killed, the
// server waits for its output pipes to reach EOF before closing them (a
// process that left the group with setsid may still hold them).
const killGrace = time.Second

// session is one "session" channel of the in-process server.
type session struct {
	srv     *SSHServer
	conn    ssh.Conn
	ch      ssh.Channel
	release func() // gives the MaxSessions slot back; idempotent
	env     []string

	started   bool          // exec or subsystem accepted
	done      chan struct{} // closed when the command or subsystem ended
	stdinDone chan struct{} // closed when the stdin copy ended

	mu      sync.Mutex
	pgid    int  // the command's process group; 0 for none
	running bool // the command's output is still open or it has not exited
	killed  chan struct{}
}

// handleSession serves one session channel. When the channel closes — the
// client closed it or the connection was lost — the command's whole process
// group is killed.
func (s *SSHServer) handleSession(conn ssh.Conn, nch ssh.NewChannel, release func()) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	sess := &session{srv: s, conn: conn, ch: ch, release: release, killed: make(chan struct{})}
	for req := range reqs {
		ok, then := sess.handle(req)
		if req.WantReply {
			req.Reply(ok, nil)
		}
		if then != nil {
			then()
		}
	}
	sess.kill()
	if sess.done != nil {
		<-sess.done
	}
	if sess.stdinDone != nil {
		<-sess.stdinDone
	}
	ch.Close()
}

// handle answers one channel request; then, when not nil, runs after the
// reply was sent (so a fast command's exit status never precedes it).
func (sess *session) handle(req *ssh.Request) (ok bool, then func()) {
	switch req.Type {
	case "env":
		var msg struct{ Name, Value string }
		if ssh.Unmarshal(req.Payload, &msg) != nil || msg.Name == "" || strings.ContainsAny(msg.Name, "=\x00") {
			return false, nil
		}
		sess.env = append(sess.env, msg.Name+"="+msg.Value)
		return true, nil
	case "exec":
		var msg struct{ Command string }
		if sess.started || ssh.Unmarshal(req.Payload, &msg) != nil {
			return false, nil
		}
		if max := sess.srv.maxExec; max != 0 && len(msg.Command) > abs(max) {
			if max > 0 {
				sess.conn.Close() // as Dropbear: "String too long" ends the connection
			}
			return false, nil
		}
		run, err := sess.startExec(msg.Command)
		if err != nil {
			fmt.Fprintf(sess.ch.Stderr(), "testenv: %v\n", err)
			return false, nil
		}
		sess.started = true
		return true, run
	case "subsystem":
		var msg struct{ Name string }
		if sess.started || ssh.Unmarshal(req.Payload, &msg) != nil || msg.Name != "sftp" {
			return false, nil
		}
		sess.started = true
		sess.done = make(chan struct{})
		return true, func() { go sess.runSFTP() }
	case "signal":
		var msg struct{ Signal string }
		if ssh.Unmarshal(req.Payload, &msg) != nil {
			return false, nil
		}
		sig := unix.SignalNum("SIG" + msg.Signal)
		return sig != 0 && sess.signal(sig), nil
	default: // "pty-req", "shell", "x11-req", agent forwarding, …
		return false, nil
	}
}

// environ is the command's environment: a login-like base plus the
// variables the client set with "env" requests.
func (sess *session) environ() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	u := sess.srv.User
	env := []string{"HOME=" + sess.srv.Home, "USER=" + u, "LOGNAME=" + u, "SHELL=/bin/sh", "PATH=" + path}
	return append(env, sess.env...)
}

// startExec starts "/bin/sh -c command" in its own process group and
// returns the function that starts copying its streams.
func (sess *session) startExec(command string) (func(), error) {
	var files []*os.File // every pipe end, closed on failure
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) (func(), error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stdin pipe: %w", err))
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stdout pipe: %w", err))
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stderr pipe: %w", err))
	}

	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = sess.srv.Home
	cmd.Env = sess.environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start /bin/sh: %w", err))
	}
	// The child holds its ends now; EOF on the read ends means every
	// process that inherited them is gone.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()

	sess.mu.Lock()
	sess.pgid, sess.running = cmd.Process.Pid, true
	sess.mu.Unlock()
	sess.srv.addGroup(cmd.Process.Pid)
	sess.done = make(chan struct{})
	sess.stdinDone = make(chan struct{})
	return func() {
		go sess.copyStdin(stdinW)
		go sess.runExec(cmd, stdoutR, stderrR)
	}, nil
}

// copyStdin copies the channel to the command's stdin and closes it at the
// client's EOF. Input that arrives after the command stopped reading is
// discarded, as sshd does.
func (sess *session) copyStdin(w *os.File) {
	defer close(sess.stdinDone)
	io.Copy(w, sess.ch)
	w.Close()
	io.Copy(io.Discard, sess.ch)
}

// runExec waits for the command and its output, then reports its exit
// status and closes the channel.
func (sess *session) runExec(cmd *exec.Cmd, stdout, stderr *os.File) {
	defer close(sess.done)
	var copies sync.WaitGroup
	copies.Add(2)
	go func() {
		defer copies.Done()
		io.Copy(sess.ch, stdout)
	}()
	go func() {
		defer copies.Done()
		io.Copy(sess.ch.Stderr(), stderr)
	}()
	outDone := make(chan struct{})
	go func() {
		copies.Wait()
		close(outDone)
	}()

	cmd.Wait() // the exit status is in cmd.ProcessState
	// Output ends when every process holding the pipes is gone: background
	// jobs keep the session open, as with sshd.
	select {
	case <-outDone:
	case <-sess.killed:
		select {
		case <-outDone:
		case <-time.After(killGrace):
			stdout.Close()
			stderr.Close()
			<-outDone
		}
	}
	stdout.Close()
	stderr.Close()

	sess.mu.Lock()
	sess.running = false
	sess.mu.Unlock()
	if syscall.Kill(-cmd.Process.Pid, 0) != nil {
		// Nothing of the group is left; forget it, so that Close never
		// signals a group id the kernel may have handed out again.
		sess.srv.dropGroup(cmd.Process.Pid)
	}
	sess.ch.CloseWrite()
	sendExitStatus(sess.ch, cmd.ProcessState)
	sess.release()
	sess.ch.Close()
}

// sendExitStatus reports how the command ended: "exit-status", or
// "exit-signal" when a signal killed it, as sshd does.
func sendExitStatus(ch ssh.Channel, ps *os.ProcessState) {
	status := uint32(255)
	if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			msg := struct {
				Signal     string
				CoreDumped bool
				Error      string
				Lang       string
			}{Signal: strings.TrimPrefix(unix.SignalName(ws.Signal()), "SIG"), CoreDumped: ws.CoreDump()}
			ch.SendRequest("exit-signal", false, ssh.Marshal(&msg))
			return
		}
		status = uint32(ps.ExitCode())
	}
	ch.SendRequest("exit-status", false, ssh.Marshal(&struct{ Status uint32 }{status}))
}

// signal sends sig to the command's process group; it reports false when
// no command is running.
func (sess *session) signal(sig syscall.Signal) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if !sess.running || sess.pgid <= 0 {
		return false
	}
	return syscall.Kill(-sess.pgid, sig) == nil
}

// kill kills the command's process group, if it still runs, and lets
// runExec stop waiting for output held by escaped processes.
func (sess *session) kill() {
	sess.signal(syscall.SIGKILL)
	close(sess.killed)
}

// runSFTP serves the "sftp" subsystem until the client closes it.
func (sess *session) runSFTP() {
	defer close(sess.done)
	status := uint32(0)
	if err := serveSFTP(sess.ch, sess.srv.Home); err != nil {
		status = 1
	}
	sess.ch.CloseWrite()
	sess.ch.SendRequest("exit-status", false, ssh.Marshal(&struct{ Status uint32 }{status}))
	sess.release()
	sess.ch.Close()
}

// addGroup remembers a process group the server started, for Close.
func (s *SSHServer) addGroup(pgid int) {
	s.mu.Lock()
	s.groups = append(s.groups, pgid)
	s.mu.Unlock()
}

// dropGroup forgets a process group that has no members left.
func (s *SSHServer) dropGroup(pgid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, g := range s.groups {
		if g == pgid {
			s.groups = append(s.groups[:i], s.groups[i+1:]...)
			return
		}
	}
}

// killGroups kills whatever is left of every process group the server
// started (background jobs that outlived their session, as sshd allows).
func (s *SSHServer) killGroups() {
	s.mu.Lock()
	groups := s.groups
	s.groups = nil
	s.mu.Unlock()
	for _, g := range groups {
		syscall.Kill(-g, syscall.SIGKILL)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
