package ssh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/transport"
)

// DefaultMaxSessions is how many session channels a Transport opens at once
// unless Options.MaxSessions says otherwise. OpenSSH's sshd allows 10 per
// connection (MaxSessions); the SFTP channel takes one and one more is kept
// for killing timed-out commands, so 8 never hits the server's limit.
const DefaultMaxSessions = 8

// Prompter asks the person at the terminal. A nil Prompter means there is no
// terminal: whatever needs an answer fails with a message saying so.
type Prompter interface {
	// Confirm asks a yes/no question and reports the answer.
	Confirm(ctx context.Context, question string) (bool, error)
	// Passphrase asks for a secret without echoing it.
	Passphrase(ctx context.Context, prompt string) ([]byte, error)
}

// Options are the settings of a Transport that do not come from ssh_config.
type Options struct {
	// Prompter asks for host-key confirmation and key passphrases; nil means
	// no terminal.
	Prompter Prompter
	// Warn receives warnings meant for the person running agent, such as
	// "Warning: Permanently added … to the list of known hosts." Nil
	// discards them.
	Warn func(msg string)
	// MaxSessions caps the command sessions open at once on the connection
	// (DefaultMaxSessions when zero). Further Runs wait for a free slot.
	MaxSessions int
	// Keys, when set, keeps the keys decrypted by one connection for the
	// others sharing it: a passphrase is asked once per run (a batch).
	Keys *KeyCache
	// ShellFiles moves files through the shell (cat, stat, sha256sum over
	// the session) even where the host has a usable SFTP server; without
	// it the shell is used only where SFTP cannot be (shellfiles.go).
	ShellFiles bool
}

// Transport is a transport.Transport over one SSH connection, reused by
// every Run and by one SFTP client. It is safe for concurrent use.
//
// The connection is watched with keepalive@openssh.com requests every
// ServerAliveInterval (15 s when the config says 0: an unattended agent must
// notice a dead host) and closed after ServerAliveCountMax (default 3)
// unanswered ones; commands running on it then fail with
// transport.ErrConnection. The next call after a lost connection dials again
// (one attempt per call).
type Transport struct {
	cfg  *HostConfig
	opts Options
	sem  chan struct{} // command sessions
	kill chan struct{} // the one extra session used to kill process groups
	dial chan struct{} // held while (re)dialling

	mu     sync.Mutex
	conn   *conn
	closed bool

	wmu      sync.Mutex // guards worker, noWorker and retired; never held while waiting on a worker
	worker   *worker    // the idle-or-busy worker shell of the current connection
	noWorker *conn      // a connection whose host cannot run a worker
	retired  []*worker  // workers draining output held by background processes, oldest first
	serve    []string   // the served worker's argv (ServeWorker); nil: the shell
	served   string     // the command that starts it

	chanGate chan struct{} // one command session at a time (gatedDropbear); nil: no limit
	fileVia  atomic.Int32  // how files move: filesUndecided, filesSFTP or filesShell (viaShell)
	execMax  atomic.Int64  // the longest exec request sent as it is (execLimit); 0: MaxExec

	hmu  sync.Mutex // guards home; held while finding it
	home string     // $HOME of commands, once known (HomeDir)
}

// maxRetired is how many retired workers may keep draining at once. Each
// holds a session slot until the background processes of its last command
// close their output; beyond this the oldest is closed (those processes then
// get EPIPE on their next write to it), so a run of `srv &` steps cannot
// starve the connection of sessions.
const maxRetired = 2

// takeWorker returns the connection's worker shell, reserved for the
// caller, starting it when there is none. It returns nil, and the caller
// uses a session of its own, when the worker is busy, being started, or
// cannot run on this host. late: the caller's request is too long for a
// shell started ahead (startWorker).
func (t *Transport) takeWorker(ctx context.Context, late bool) *worker {
	if !t.wmu.TryLock() {
		return nil
	}
	defer t.wmu.Unlock()
	if w := t.worker; w != nil {
		if !w.busy.TryLock() {
			return nil
		}
		healthy := !w.broken && w.c.alive() && !isDone(w.exited)
		if healthy && w.served == t.served {
			return w
		}
		if healthy && w.served == "" && t.serve != nil {
			// The shell execs the served worker in its place: no session
			// and login shell of its own. Its start is checked with the
			// command's run (worker.started).
			if err := w.become(t.serve, t.served); err == nil {
				return w
			}
			w.broken = true
		}
		t.worker = nil
		w.busy.Unlock()
		w.close(func() { <-t.sem })
	}
	c, err := t.current(ctx)
	if err != nil || c == t.noWorker {
		return nil
	}
	select {
	case t.sem <- struct{}{}: // the worker holds one session slot while it lives
	default:
		return nil
	}
	var w *worker
	ungate, err := t.gate(ctx)
	if err != nil {
		<-t.sem
		return nil
	}
	defer ungate()
	if t.serve != nil {
		if w, err = startServed(ctx, c, t.served); err != nil && ctx.Err() == nil && c.alive() {
			t.opts.Warn(fmt.Sprintf("%s: %s did not start as the worker; each command starts it (%v)", t.Host().Name, t.serve[0], err))
			t.serve, t.served = nil, ""
		}
	}
	if w == nil && ctx.Err() == nil {
		w, err = startWorker(ctx, c, late)
	}
	if w == nil {
		<-t.sem
		if ctx.Err() == nil && c.alive() {
			t.noWorker = c
			t.opts.Warn(fmt.Sprintf("%s: commands run one session each (%v)", t.Host().Name, err))
		}
		return nil
	}
	t.worker = w
	w.busy.Lock()
	return w
}

// ServeWorker makes argv, from the next command on, the program that
// serves as the connection's worker instead of the shell: a confining
// launcher's -serve (confine.Serve), which speaks the worker's protocol
// and runs a command whose Wrap is its own confinement in its own
// process, confined in a thread, instead of starting Wrap per command
// (docs/decisions.md, "Locally on a thread, over SSH a launcher"). nil goes
// back to the shell. An idle worker of the other kind is closed at the
// next command; one that fails to start is reported through Warn, once,
// and the shell serves instead.
func (t *Transport) ServeWorker(argv []string) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.serve, t.served = nil, ""
	if len(argv) > 0 {
		t.serve, t.served = slices.Clone(argv), "exec"+quoteArgs(argv)
	}
}

// releaseWorker gives w back after a command; a broken worker is retired.
func (t *Transport) releaseWorker(w *worker) {
	if w.broken {
		t.wmu.Lock()
		if t.worker == w {
			t.worker = nil
		}
		var evict *worker
		if w.lingering {
			t.retired = append(t.retired, w)
			if len(t.retired) > maxRetired {
				evict, t.retired = t.retired[0], t.retired[1:]
			}
		}
		t.wmu.Unlock()
		if w.lingering {
			t.opts.Warn(fmt.Sprintf("%s: a command left background processes writing to its output; start them with nohup … >file 2>&1 & so they do not hold the session", t.Host().Name))
		}
		w.close(func() {
			t.wmu.Lock()
			t.retired = slices.DeleteFunc(t.retired, func(r *worker) bool { return r == w })
			t.wmu.Unlock()
			<-t.sem
		})
		if evict != nil {
			evict.sess.Close()
		}
	}
	w.busy.Unlock()
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The transport and its optional capabilities (transport.As).
var (
	_ transport.Transport    = (*Transport)(nil)
	_ transport.RealPather   = (*Transport)(nil)
	_ transport.HomeDirer    = (*Transport)(nil)
	_ transport.DirReader    = (*Transport)(nil)
	_ transport.Inspector    = (*Transport)(nil)
	_ transport.FilesAheader = (*Transport)(nil)
)

// Dial connects to the host cfg describes (through its ProxyJump hosts, each
// with its own host-key check and authentication) and returns a Transport
// that reuses the connection. ctx bounds the whole dial; each hop is also
// bounded by its ConnectTimeout (30 s when zero), which covers the TCP
// connect, the SSH handshake and authentication but not the time a person
// takes to answer a prompt.
func Dial(ctx context.Context, cfg *HostConfig, opts Options) (*Transport, error) {
	if cfg == nil || cfg.HostName == "" {
		return nil, errors.New("ssh dial: no HostName to dial")
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	t := &Transport{
		cfg:  cfg,
		opts: opts,
		sem:  make(chan struct{}, opts.MaxSessions),
		kill: make(chan struct{}, 1),
		dial: make(chan struct{}, 1),
	}
	c, err := dialConn(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	t.conn = c
	if gatedDropbear(string(c.client.ServerVersion())) {
		t.chanGate = make(chan struct{}, 1)
	}
	return t, nil
}

// Connected reports whether the transport's current connection is up as
// far as the client knows: false before the first dial and once it saw the
// connection end (the next command dials again). A connection cut a moment
// ago may still read as up.
func (t *Transport) Connected() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn != nil && t.conn.alive()
}

// Host describes the host. It does no I/O.
func (t *Transport) Host() transport.HostInfo {
	name := t.cfg.Alias
	if name == "" {
		name = t.cfg.HostName
	}
	return transport.HostInfo{
		Name: name,
		Kind: "ssh",
		Addr: hostPort(t.cfg),
		User: userOf(t.cfg),
	}
}

// Close closes the SFTP client, the connection and the jump-host chain and
// stops keepalive. Later calls fail with transport.ErrClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	c := t.conn
	t.conn = nil
	t.mu.Unlock()
	if c != nil {
		c.close(transport.ErrClosed)
	}
	return nil
}

// current returns the live connection, dialling again once when the last
// one was lost.
func (t *Transport) current(ctx context.Context) (*conn, error) {
	t.mu.Lock()
	closed, c := t.closed, t.conn
	t.mu.Unlock()
	if closed {
		return nil, transport.ErrClosed
	}
	if c != nil && c.alive() {
		return c, nil
	}
	return t.redial(ctx, c)
}

// redial replaces the dead connection old with a new one: one attempt. When
// another goroutine already replaced it, that connection is used.
func (t *Transport) redial(ctx context.Context, old *conn) (*conn, error) {
	if old != nil {
		old.close(errConnLost)
	}
	select {
	case t.dial <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-t.dial }()
	t.mu.Lock()
	closed, c := t.closed, t.conn
	t.mu.Unlock()
	if closed {
		return nil, transport.ErrClosed
	}
	if c != nil && c != old && c.alive() {
		return c, nil
	}
	c, err := dialConn(ctx, t.cfg, t.opts)
	if err != nil {
		if errors.Is(err, transport.ErrConnection) {
			return nil, fmt.Errorf("reconnect: %w", err)
		}
		return nil, fmt.Errorf("%w: reconnect: %w", transport.ErrConnection, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		c.close(transport.ErrClosed)
		return nil, transport.ErrClosed
	}
	t.conn = c
	return c, nil
}

// lostErr wraps err, which happened on c, as a connection error (or
// transport.ErrClosed after Close).
func (t *Transport) lostErr(c *conn, err error) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: %w", transport.ErrClosed, err)
	}
	c.close(errConnLost)
	if errors.Is(err, transport.ErrConnection) {
		return err
	}
	if cause := c.cause(); cause != nil && !errors.Is(cause, errConnLost) {
		return fmt.Errorf("%w: %w (%w)", transport.ErrConnection, err, cause)
	}
	return fmt.Errorf("%w: %w", transport.ErrConnection, err)
}

// retry runs open (which starts something on a connection: a session, the
// SFTP client) on the current connection. When it fails because the
// connection is gone and this call has not dialled yet, retry dials once
// more and runs open again: nothing has run yet, so that is safe.
func (t *Transport) retry(ctx context.Context, open func(c *conn) error) (*conn, error) {
	t.mu.Lock()
	prev := t.conn
	t.mu.Unlock()
	c, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	err = open(c)
	if err == nil {
		return c, nil
	}
	if ctx.Err() != nil || isOpenRejected(err) || (c.alive() && c.ping(pingWait)) {
		return nil, err // not the connection's fault
	}
	if c != prev { // this call dialled already
		return nil, t.lostErr(c, err)
	}
	if c, err = t.redial(ctx, c); err != nil {
		return nil, err
	}
	if err = open(c); err != nil {
		if ctx.Err() != nil || isOpenRejected(err) || (c.alive() && c.ping(pingWait)) {
			return nil, err
		}
		return nil, t.lostErr(c, err)
	}
	return c, nil
}

// pingWait bounds the keepalive that tells a refusal from a lost
// connection.
const pingWait = 2 * time.Second

func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func portOf(cfg *HostConfig) int {
	if cfg.Port <= 0 {
		return 22
	}
	return cfg.Port
}

func hostPort(cfg *HostConfig) string {
	return net.JoinHostPort(cfg.HostName, strconv.Itoa(portOf(cfg)))
}

// openSession opens a session channel, bounded by ctx (NewSession waits for
// the server's answer, which a stalled connection never sends).
//
// A refusal is retried for a while: sshd frees a closed session's slot only
// when its main loop collects the channel, so an open that arrives in the
// same read as the close of another session can find MaxSessions still
// taken ("no more sessions"), even below the limit.
func openSession(ctx context.Context, client *gossh.Client) (*gossh.Session, error) {
	deadline := time.Now().Add(openRetryFor)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		s, err := openSessionOnce(ctx, client)
		if err == nil || !isOpenRejected(err) || time.Now().After(deadline) {
			return s, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// openRetryFor bounds retrying a refused session open.
const openRetryFor = 2 * time.Second

func openSessionOnce(ctx context.Context, client *gossh.Client) (*gossh.Session, error) {
	type res struct {
		s   *gossh.Session
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := client.NewSession()
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// isOpenRejected reports whether err is the server refusing a channel (the
// connection itself is fine).
func isOpenRejected(err error) bool {
	var oce *gossh.OpenChannelError
	return errors.As(err, &oce)
}
