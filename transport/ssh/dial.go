package ssh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/transport"
)

// defaultConnectTimeout bounds connect + handshake + auth of a hop whose
// ConnectTimeout is zero (golang/go#50046: without it a peer that accepts and
// never speaks hangs the dial forever).
const defaultConnectTimeout = 30 * time.Second

// errConnLost is the cause recorded when the SSH transport went away.
var errConnLost = errors.New("connection lost")

// conn is one SSH connection (the last client of a ProxyJump chain) and
// what hangs off it.
type conn struct {
	client *gossh.Client
	hops   []*gossh.Client // jump-host clients, first hop first
	done   chan struct{}   // closed when the connection is gone

	sftpOpen chan struct{} // held while the SFTP client starts

	mu      sync.Mutex
	err     error // why it ended
	ended   bool
	sftp    *sftp.Client
	home    func() string // remote home (SFTP realpath "."), waited for
	noFsync bool          // the server lacks fsync@openssh.com (warned once)
}

func newConn(client *gossh.Client, hops []*gossh.Client) *conn {
	c := &conn{client: client, hops: hops, done: make(chan struct{}), sftpOpen: make(chan struct{}, 1)}
	go func() {
		client.Wait()
		c.close(errConnLost)
	}()
	return c
}

func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func (c *conn) cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close ends the connection, recording why (the first reason wins). It
// closes the client before the SFTP client, so that a stalled connection
// cannot block sftp.Client.Close, then the jump hosts, last hop first.
func (c *conn) close(why error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	c.err = why
	sc := c.sftp
	c.sftp = nil
	close(c.done)
	c.mu.Unlock()
	c.client.Close()
	if sc != nil {
		sc.Close()
	}
	for i := len(c.hops) - 1; i >= 0; i-- {
		c.hops[i].Close()
	}
}

// dialConn connects to cfg through the operator's live ControlMaster
// (dialMaster), else dials it through its jump hosts, and starts
// keepalive.
func dialConn(ctx context.Context, cfg *HostConfig, opts Options) (*conn, error) {
	if c := dialMaster(ctx, cfg, opts); c != nil {
		startKeepalive(c, cfg)
		return c, nil
	}
	chain := append(append([]*HostConfig(nil), cfg.ProxyJump...), cfg)
	var clients []*gossh.Client
	fail := func(err error) (*conn, error) {
		for i := len(clients) - 1; i >= 0; i-- {
			clients[i].Close()
		}
		return nil, err
	}
	for i, h := range chain {
		var prev *gossh.Client
		if i > 0 {
			prev = clients[i-1]
		}
		client, err := dialHop(ctx, h, prev, opts)
		if err != nil {
			if i < len(chain)-1 {
				err = fmt.Errorf("jump host %s: %w", describe(h), err)
			}
			return fail(err)
		}
		clients = append(clients, client)
	}
	c := newConn(clients[len(clients)-1], clients[:len(clients)-1])
	startKeepalive(c, cfg)
	return c, nil
}

// startKeepalive watches c with cfg's ServerAliveInterval and
// ServerAliveCountMax (keepalive).
func startKeepalive(c *conn, cfg *HostConfig) {
	interval := cfg.ServerAliveInterval
	if interval <= 0 {
		interval = defaultAliveInterval
	}
	countMax := cfg.ServerAliveCountMax
	if countMax <= 0 {
		countMax = defaultAliveCountMax
	}
	go keepalive(c, interval, countMax)
}

// dialHop connects to h, directly or through prev, and authenticates.
func dialHop(ctx context.Context, h *HostConfig, prev *gossh.Client, opts Options) (*gossh.Client, error) {
	timeout := h.ConnectTimeout
	if timeout <= 0 {
		timeout = defaultConnectTimeout
	}
	addr := hostPort(h)
	g := &guard{timeout: timeout}

	dctx, cancel := context.WithTimeout(ctx, timeout)
	var nc net.Conn
	var err error
	switch {
	case prev == nil && h.ProxyCommand != "":
		nc, err = dialProxyCommand(dctx, h)
	case prev == nil:
		var d net.Dialer
		nc, err = d.DialContext(dctx, "tcp", addr)
	default:
		nc, err = prev.DialContext(dctx, "tcp", addr)
	}
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to %s: %w", describe(h), ctx.Err())
		}
		return nil, fmt.Errorf("%w: connect to %s: %w", transport.ErrConnection, describe(h), err)
	}

	hk, err := newHostKeyChecker(ctx, h, opts, g)
	if err != nil {
		nc.Close()
		return nil, err
	}
	au := newAuthenticator(ctx, h, opts, g)
	defer au.close()
	config := &gossh.ClientConfig{
		User:              userOf(h),
		Auth:              au.methods(),
		HostKeyCallback:   hk.check,
		HostKeyAlgorithms: hk.algorithms(),
	}

	g.start(nc)
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	bc := &bannerConn{Conn: nc}
	sc, chans, reqs, err := gossh.NewClientConn(bc, addr, config)
	cancelled := !stop()
	timedOut := g.stop() || errors.Is(err, os.ErrDeadlineExceeded)
	if err == nil && (cancelled || timedOut) {
		sc.Close()
		err = net.ErrClosed
	}
	if err != nil {
		nc.Close()
		switch {
		case hk.refusal() != nil:
			return nil, hk.refusal()
		case cancelled:
			return nil, fmt.Errorf("ssh handshake with %s: %w", describe(h), ctx.Err())
		case timedOut:
			return nil, fmt.Errorf("%w: ssh handshake with %s: no answer within %s (ConnectTimeout)",
				transport.ErrConnection, describe(h), timeout)
		case isAuthFailure(err) || au.signFailed():
			return nil, au.failure(err)
		}
		pc, proxied := nc.(*proxyConn)
		// Through a ProxyCommand, a connection closed before the version is
		// the command ending: its status and stderr say why (not MaxStartups,
		// and not to be dialled again).
		if said, ok := bc.dropped(err); ok && !proxied {
			if said != "" {
				said = fmt.Sprintf(" (it said %q)", said)
			}
			return nil, fmt.Errorf("%w: %w: %s closed the connection before sending its SSH version%s; sshd does that past MaxStartups",
				transport.ErrConnection, ErrDropped, describe(h), said)
		}
		err = fmt.Errorf("%w: ssh handshake with %s: %w", transport.ErrConnection, describe(h), err)
		if proxied {
			err = pc.explain(err)
		}
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	return gossh.NewClient(sc, chans, reqs), nil
}

// guard bounds the handshake of one hop: it closes the connection when the
// deadline passes. Prompts pause it, so that the time a person takes to
// answer does not count.
type guard struct {
	timeout time.Duration

	mu      sync.Mutex
	nc      net.Conn
	timer   *time.Timer
	fired   bool
	stopped bool
}

func (g *guard) start(nc net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nc = nc
	nc.SetDeadline(time.Now().Add(g.timeout)) // a no-op error on a jump channel
	g.timer = time.AfterFunc(g.timeout, g.fire)
}

func (g *guard) fire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.fired = true
	g.nc.Close()
}

// stop ends the guard and reports whether the deadline had passed.
func (g *guard) stop() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.timer != nil {
		g.timer.Stop()
	}
	return g.fired
}

// pause suspends the deadline while fn asks a person, then restarts it
// with the full timeout.
func (g *guard) pause(fn func()) {
	g.mu.Lock()
	running := g.timer != nil && !g.stopped && g.timer.Stop()
	if running {
		g.nc.SetDeadline(time.Time{})
	}
	g.mu.Unlock()
	fn()
	g.mu.Lock()
	defer g.mu.Unlock()
	if running && !g.stopped {
		g.nc.SetDeadline(time.Now().Add(g.timeout))
		g.timer.Reset(g.timeout)
	}
}

func isAuthFailure(err error) bool {
	return strings.Contains(err.Error(), "unable to authenticate")
}

// describe names a host in messages: "alias (user@host:port)".
func describe(h *HostConfig) string {
	target := userOf(h) + "@" + hostPort(h)
	if h.Alias != "" && h.Alias != h.HostName {
		return h.Alias + " (" + target + ")"
	}
	return target
}

// userOf is the remote user: the configured one, else the local user name.
func userOf(h *HostConfig) string {
	if h.User != "" {
		return h.User
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
