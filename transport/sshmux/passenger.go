package sshmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// passengers is a gossh.Conn whose session channels are passenger
// sessions of the master: each its own connection to the control socket,
// a MUX_C_NEW_SESSION with the command, and the three descriptors of
// pipes whose other ends this side reads and writes. The master opens the
// channel on its connection, runs the command and reports its exit status.
type passengers struct {
	path string
	addr net.Addr

	watch *net.UnixConn // an idle control connection; it ends with the master

	mu     sync.Mutex
	open   map[*passenger]bool
	closed bool
	done   chan struct{}
}

var _ gossh.Conn = (*passengers)(nil)

func (p *passengers) User() string          { return "" }
func (p *passengers) SessionID() []byte     { return nil }
func (p *passengers) ClientVersion() []byte { return nil }
func (p *passengers) ServerVersion() []byte { return nil }
func (p *passengers) RemoteAddr() net.Addr  { return p.addr }
func (p *passengers) LocalAddr() net.Addr   { return p.addr }

// SendRequest answers keepalive@openssh.com with an alive check of the
// master (false, like a server's reply to a request it does not know;
// an error when the master is gone); a master carries no other global
// request for a passenger.
func (p *passengers) SendRequest(name string, wantReply bool, payload []byte) (bool, []byte, error) {
	if name != "keepalive@openssh.com" {
		return false, nil, fmt.Errorf("global request %q: not carried by a ControlMaster", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), aliveWait)
	defer cancel()
	if _, err := AliveCheck(ctx, p.path); err != nil {
		return false, nil, err
	}
	return false, nil, nil
}

// OpenChannel makes a session channel; its session starts at the exec,
// shell or subsystem request (SendRequest). Other channel types are
// refused.
func (p *passengers) OpenChannel(name string, data []byte) (gossh.Channel, <-chan *gossh.Request, error) {
	if name != "session" {
		return nil, nil, &gossh.OpenChannelError{Reason: gossh.UnknownChannelType, Message: "only sessions go through a ControlMaster"}
	}
	s, err := newPassenger(p)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		s.Close()
		return nil, nil, net.ErrClosed
	}
	p.open[s] = true
	return s, s.reqs, nil
}

// Close ends every session and makes Wait return.
func (p *passengers) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	open := p.open
	p.open = nil
	close(p.done)
	p.mu.Unlock()
	p.watch.Close()
	for s := range open {
		s.Close()
	}
	return nil
}

// watchMaster closes p when the master ends its idle control connection
// (the master exited) or sends anything on it (it has nothing to say).
func (p *passengers) watchMaster() {
	readMessage(p.watch)
	p.Close()
}

// Wait returns once Close was called or the master exited.
func (p *passengers) Wait() error {
	<-p.done
	return net.ErrClosed
}

func (p *passengers) forget(s *passenger) {
	p.mu.Lock()
	delete(p.open, s)
	p.mu.Unlock()
}

// passenger is one session channel (gossh.Channel).
type passenger struct {
	p    *passengers
	reqs chan *gossh.Request

	// This side's ends: the command's stdin to write, its stdout and
	// stderr to read. theirs are the master's ends, sent at the start.
	stdin          *os.File
	stdout, stderr *os.File
	theirs         [3]*os.File

	mu      sync.Mutex
	started bool
	sock    *net.UnixConn
	ended   bool
	reqOnce sync.Once
}

func newPassenger(p *passengers) (*passenger, error) {
	s := &passenger{p: p, reqs: make(chan *gossh.Request, 4)}
	var err error
	if s.theirs[0], s.stdin, err = os.Pipe(); err != nil {
		return nil, err
	}
	if s.stdout, s.theirs[1], err = os.Pipe(); err != nil {
		s.closeFiles()
		return nil, err
	}
	if s.stderr, s.theirs[2], err = os.Pipe(); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

func (s *passenger) closeFiles() {
	for _, f := range []*os.File{s.stdin, s.stdout, s.stderr, s.theirs[0], s.theirs[1], s.theirs[2]} {
		if f != nil {
			f.Close()
		}
	}
}

func (s *passenger) Read(b []byte) (int, error)  { return readEOF(s.stdout, b) }
func (s *passenger) Stderr() io.ReadWriter       { return stderrOf{s} }
func (s *passenger) Write(b []byte) (int, error) { return writeEOF(s.stdin, b) }

// CloseWrite closes the command's standard input.
func (s *passenger) CloseWrite() error {
	if err := s.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

// Close ends the session: the master closes its channel when its
// control connection goes.
func (s *passenger) Close() error {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return nil
	}
	s.ended = true
	sock := s.sock
	s.mu.Unlock()
	if sock != nil {
		sock.Close()
	}
	s.closeFiles()
	s.endRequests()
	s.p.forget(s)
	return nil
}

func (s *passenger) endRequests() { s.reqOnce.Do(func() { close(s.reqs) }) }

type stderrOf struct{ s *passenger }

func (e stderrOf) Read(b []byte) (int, error) { return readEOF(e.s.stderr, b) }
func (e stderrOf) Write(b []byte) (int, error) {
	return 0, errors.New("a session's client cannot write stderr")
}

// readEOF reads f, a closed f reading as the end.
func readEOF(f *os.File, b []byte) (int, error) {
	n, err := f.Read(b)
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// writeEOF writes f; a command that no longer reads is io.EOF, as on a
// channel the server closed.
func writeEOF(f *os.File, b []byte) (int, error) {
	n, err := f.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// SendRequest starts the session at exec, shell or subsystem, answered
// true once the master has opened it. Other requests (env, pty-req,
// signal, window-change) are not carried by a passenger: false.
func (s *passenger) SendRequest(name string, wantReply bool, payload []byte) (bool, error) {
	var command string
	subsystem := false
	switch name {
	case "exec", "subsystem":
		v, rest, ok := getString(payload)
		if !ok || len(rest) != 0 {
			return false, fmt.Errorf("%s request: malformed payload", name)
		}
		command, subsystem = string(v), name == "subsystem"
	case "shell":
	default:
		return false, nil
	}
	s.mu.Lock()
	if s.started || s.ended {
		s.mu.Unlock()
		return false, nil
	}
	s.started = true
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	sock, sid, err := startRetrying(ctx, s.p.path, command, subsystem, s.theirs)
	if err != nil {
		s.endRequests()
		var re *RefusedError
		if errors.As(err, &re) {
			return false, nil
		}
		return false, err
	}
	for i, f := range s.theirs { // the master holds them now
		f.Close()
		s.theirs[i] = nil
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		sock.Close()
		return false, net.ErrClosed
	}
	s.sock = sock
	s.mu.Unlock()
	go s.events(sock, sid)
	return true, nil
}

// startWait bounds starting one session, retries included.
const startWait = 30 * time.Second

// events delivers the exit status as the server would (an exit-status
// request) and ends the requests when the master closes the control
// connection.
func (s *passenger) events(sock *net.UnixConn, sid uint32) {
	defer s.endRequests()
	for {
		typ, body, err := readMessage(sock)
		if err != nil {
			return
		}
		status, exited, err := parseEvent(typ, body, sid)
		if err != nil {
			return
		}
		if exited {
			s.reqs <- &gossh.Request{Type: "exit-status", Payload: gossh.Marshal(struct{ Status uint32 }{status})}
		}
	}
}

// startRetrying starts a session, again while the server refuses it
// (sshd frees a closed session's slot a moment late; see openSession in
// transport/ssh) until ctx ends.
func startRetrying(ctx context.Context, path, command string, subsystem bool, fds [3]*os.File) (*net.UnixConn, uint32, error) {
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		sock, sid, err := start(ctx, path, command, subsystem, fds)
		var re *RefusedError
		if err == nil || !errors.As(err, &re) || re.Reason != sessionRefused {
			return sock, sid, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, 0, err
		}
	}
}

// sessionID is the request id of a passenger's MUX_C_NEW_SESSION (one
// per control connection).
const sessionID = 1

// start sends MUX_C_NEW_SESSION and the three descriptors on a new
// connection to the master and waits for MUX_S_SESSION_OPENED.
func start(ctx context.Context, path, command string, subsystem bool, fds [3]*os.File) (*net.UnixConn, uint32, error) {
	sock, err := dialSocket(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*net.UnixConn, uint32, error) {
		sock.Close()
		return nil, 0, fmt.Errorf("mux session on %s: %w", path, err)
	}
	stop := bound(ctx, sock)
	defer stop()
	if err := writeMessage(sock, msgHello, protocolVersion); err != nil {
		return fail(err)
	}
	if _, err := sock.Write(newSession(sessionID, command, subsystem)); err != nil {
		return fail(err)
	}
	for _, f := range fds {
		if _, _, err := sock.WriteMsgUnix([]byte{0}, syscall.UnixRights(int(f.Fd())), nil); err != nil {
			return fail(fmt.Errorf("pass descriptors: %w", err))
		}
	}
	typ, body, err := readMessage(sock)
	if err != nil {
		return fail(err)
	}
	if err := parseHello(typ, body); err != nil {
		return fail(err)
	}
	if typ, body, err = readMessage(sock); err != nil {
		return fail(err)
	}
	sid, err := parseReply(typ, body, sessionID)
	if err == nil && typ != msgSessionOpened {
		err = fmt.Errorf("%w: reply %#x to a new session", ErrProtocol, typ)
	}
	if err != nil {
		return fail(err)
	}
	return sock, sid, nil
}
