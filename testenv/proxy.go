package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// proxyDialTimeout bounds connecting to the proxy's target.
const proxyDialTimeout = 10 * time.Second

// Proxy is a TCP forwarder on 127.0.0.1 that injects faults: it can delay,
// stall or cut the connections it forwards to its target. Faults apply to
// live and future connections alike.
type Proxy struct {
	// Addr is "127.0.0.1:port" to dial instead of the target; Port is its
	// port.
	Addr string
	Port int

	target string
	ln     net.Listener
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	conns    map[*proxyConn]struct{}
	cutAfter int64 // byte budget of new connections; < 0: unlimited
	delay    time.Duration
	stall    chan struct{} // non-nil while stalled; closed to resume
	closed   bool
}

// proxyConn is one forwarded connection.
type proxyConn struct {
	client, target net.Conn
	budget         int64 // client→target bytes left before the cut; < 0: unlimited (Proxy.mu)
	ended          int   // directions finished (Proxy.mu)
	done           chan struct{}
	once           sync.Once
}

// cut closes both sides.
func (c *proxyConn) cut() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.target.Close()
	})
}

// StartProxy starts a Proxy to target, fails t on error and closes the
// proxy when t ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := NewProxy(target)
	if err != nil {
		t.Fatalf("start proxy: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// NewProxy listens on 127.0.0.1:0 and forwards every accepted connection to
// target ("host:port").
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		Addr:     ln.Addr().String(),
		Port:     ln.Addr().(*net.TCPAddr).Port,
		target:   target,
		ln:       ln,
		ctx:      ctx,
		cancel:   cancel,
		conns:    map[*proxyConn]struct{}{},
		cutAfter: -1,
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// CutAfter makes every live and future connection close (both sides) once
// it has forwarded n more bytes from client to target, counted from this
// call (for a future connection: from its start). n = 0 cuts live
// connections now and new ones as soon as they are accepted; n < 0 disables
// cutting.
func (p *Proxy) CutAfter(n int64) {
	if n < 0 {
		n = -1
	}
	p.mu.Lock()
	p.cutAfter = n
	var cut []*proxyConn
	for c := range p.conns {
		c.budget = n
		if n == 0 {
			cut = append(cut, c)
		}
	}
	p.mu.Unlock()
	for _, c := range cut {
		c.cut()
	}
}

// SetDelay sets a delay added before forwarding each chunk read, in both
// directions; 0 removes it.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Stall(true) stops forwarding in both directions without closing anything,
// like a peer that died or a network that drops every packet; data already
// read is held. Stall(false) resumes forwarding.
func (p *Proxy) Stall(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.stall == nil:
		p.stall = make(chan struct{})
	case !on && p.stall != nil:
		close(p.stall)
		p.stall = nil
	}
}

// CutAll closes every live connection now, both sides.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.cut()
	}
}

// Close stops listening, closes every connection and waits for the
// forwarding goroutines. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("close proxy listener: %w", err)
	}
	return nil
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.connect(client)
	}
}

// connect dials the target for an accepted client and starts forwarding.
func (p *Proxy) connect(client net.Conn) {
	defer p.wg.Done()
	var dialer net.Dialer
	ctx, cancel := context.WithTimeout(p.ctx, proxyDialTimeout)
	target, err := dialer.DialContext(ctx, "tcp", p.target)
	cancel()
	if err != nil {
		client.Close()
		return
	}
	c := &proxyConn{client: client, target: target, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.cut()
		return
	}
	c.budget = p.cutAfter
	cutNow := c.budget == 0
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	if cutNow {
		c.cut()
	}
	p.wg.Add(2)
	go p.forward(c, c.target, c.client, true)
	go p.forward(c, c.client, c.target, false)
}

// forward copies src to dst chunk by chunk, applying the faults. upstream
// is the client→target direction, the one CutAfter counts.
func (p *Proxy) forward(c *proxyConn, dst, src net.Conn, upstream bool) {
	defer p.wg.Done()
	defer p.endDirection(c)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.hold(c) {
				return
			}
			chunk, cutNow := buf[:n], false
			if upstream {
				p.mu.Lock()
				if c.budget >= 0 {
					if int64(n) >= c.budget {
						chunk, cutNow, c.budget = chunk[:c.budget], true, 0
					} else {
						c.budget -= int64(n)
					}
				}
				p.mu.Unlock()
			}
			if _, werr := dst.Write(chunk); werr != nil {
				c.cut()
				return
			}
			if cutNow {
				c.cut()
				return
			}
		}
		if err != nil {
			// EOF: pass the half-close on; anything else ends the connection.
			if tc, ok := dst.(*net.TCPConn); ok && isEOF(err) {
				tc.CloseWrite()
			} else {
				c.cut()
			}
			return
		}
	}
}

// hold applies the delay and the stall before a chunk is forwarded; it
// reports false when the connection was cut meanwhile.
func (p *Proxy) hold(c *proxyConn) bool {
	p.mu.Lock()
	d := p.delay
	p.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.done:
			t.Stop()
			return false
		}
	}
	for {
		p.mu.Lock()
		stall := p.stall
		p.mu.Unlock()
		if stall == nil {
			break
		}
		select {
		case <-stall:
		case <-c.done:
			return false
		}
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// endDirection records that one direction finished; after both, the
// connection is closed and forgotten.
func (p *Proxy) endDirection(c *proxyConn) {
	p.mu.Lock()
	c.ended++
	last := c.ended == 2
	if last {
		delete(p.conns, c)
	}
	p.mu.Unlock()
	if last {
		c.cut()
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
