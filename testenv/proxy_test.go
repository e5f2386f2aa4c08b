package testenv

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// sink is a TCP target that reports, per connection, every chunk it
// receives and, at EOF, everything it received. It echoes what it reads
// when echo is set.
type sink struct {
	ln     net.Listener
	chunks chan []byte
	totals chan []byte
}

func startSink(t *testing.T, echo bool) *sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{ln: ln, chunks: make(chan []byte, 100), totals: make(chan []byte, 10)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var all []byte
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						s.chunks <- bytes.Clone(buf[:n])
						all = append(all, buf[:n]...)
						if echo {
							c.Write(buf[:n])
						}
					}
					if err != nil {
						s.totals <- all
						return
					}
				}
			}()
		}
	}()
	return s
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expectClosed fails t unless reading c ends (EOF or reset) within 5 s.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("connection still open")
	}
}

func TestProxyForwards(t *testing.T) {
	target := startSink(t, true)
	p := StartProxy(t, target.ln.Addr().String())
	if p.Addr != net.JoinHostPort("127.0.0.1", strings.TrimPrefix(p.Addr, "127.0.0.1:")) || p.Port == 0 {
		t.Fatalf("Addr %q Port %d", p.Addr, p.Port)
	}
	c := dialProxy(t, p)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo %q, %v", got, err)
	}
	c.(*net.TCPConn).CloseWrite() // the half-close reaches the target
	if all := recv(t, target.totals, "EOF at target"); string(all) != "ping" {
		t.Errorf("target got %q", all)
	}
	expectClosed(t, c)
}

func TestProxyCutAfter(t *testing.T) {
	target := startSink(t, false)
	p := StartProxy(t, target.ln.Addr().String())

	// A live connection: 5 bytes before the call are not counted.
	live := dialProxy(t, p)
	live.Write([]byte("01234"))
	recv(t, target.chunks, "first chunk")
	p.CutAfter(3)
	live.Write([]byte("56789"))
	if all := recv(t, target.totals, "cut of live conn"); string(all) != "01234567" {
		t.Errorf("live: target got %q; want 01234567", all)
	}
	expectClosed(t, live)

	// A future connection gets the same budget from its start.
	next := dialProxy(t, p)
	next.Write([]byte("abcdefgh"))
	if all := recv(t, target.totals, "cut of new conn"); string(all) != "abc" {
		t.Errorf("new: target got %q; want abc", all)
	}
	expectClosed(t, next)

	// n = 0 cuts new connections at once; n < 0 disables cutting.
	p.CutAfter(0)
	expectClosed(t, dialProxy(t, p))
	if all := recv(t, target.totals, "conn cut at once"); len(all) != 0 {
		t.Errorf("n=0: target got %q", all)
	}
	p.CutAfter(-1)
	free := dialProxy(t, p)
	free.Write([]byte(strings.Repeat("x", 100)))
	free.(*net.TCPConn).CloseWrite()
	if all := recv(t, target.totals, "uncut conn"); len(all) != 100 {
		t.Errorf("uncut: target got %d bytes", len(all))
	}
}

func TestProxyStall(t *testing.T) {
	target := startSink(t, false)
	p := StartProxy(t, target.ln.Addr().String())
	c := dialProxy(t, p)
	p.Stall(true)
	c.Write([]byte("held"))
	select {
	case b := <-target.chunks:
		t.Fatalf("stalled proxy forwarded %q", b)
	case <-time.After(100 * time.Millisecond):
	}
	p.Stall(false)
	if b := recv(t, target.chunks, "data after Stall(false)"); string(b) != "held" {
		t.Errorf("got %q", b)
	}
}

func TestProxyDelay(t *testing.T) {
	target := startSink(t, true)
	p := StartProxy(t, target.ln.Addr().String())
	c := dialProxy(t, p)
	const d = 50 * time.Millisecond
	p.SetDelay(d)
	start := time.Now()
	c.Write([]byte("x"))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 2*d {
		t.Errorf("round trip %v; want at least %v (delay both ways)", rtt, 2*d)
	}
}

func TestProxyCutAllAndClose(t *testing.T) {
	target := startSink(t, true)
	p, err := NewProxy(target.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, b := dialProxy(t, p), dialProxy(t, p)
	a.Write([]byte("1"))
	b.Write([]byte("2"))
	recv(t, target.chunks, "a")
	recv(t, target.chunks, "b")
	p.CutAll()
	expectClosed(t, a)
	expectClosed(t, b)

	c := dialProxy(t, p) // still accepting after CutAll
	c.Write([]byte("3"))
	recv(t, target.chunks, "c")
	p.Stall(true) // Close must not wait for a stalled connection
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c)
	if _, err := net.Dial("tcp", p.Addr); err == nil {
		t.Error("proxy still accepting after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestProxySSH puts the proxy between a client and the in-process server:
// the faults look like network faults to SSH.
func TestProxySSH(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	p := StartProxy(t, srv.Addr)
	h := srv.Host
	h.Addr = p.Addr
	c := dial(t, h)
	if r := run(t, c, "echo via proxy", "", nil); r.err != nil || r.stdout != "via proxy\n" {
		t.Fatalf("got %q, %v", r.stdout, r.err)
	}
	s, pids := startSleepers(t, c)
	p.CutAll()
	if err := s.Wait(); err == nil {
		t.Error("session survived the cut")
	}
	waitGone(t, pids) // the server noticed the lost connection and killed the group

	p.CutAfter(100) // dies during the handshake
	if c, err := h.Dial(); err == nil {
		c.Close()
		t.Error("handshake survived a cut after 100 bytes")
	}
}
