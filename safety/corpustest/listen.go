package corpustest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Listen listens on 127.0.0.1:port, UDP and TCP, as the network attacks
// aim there; heard says what arrived (a datagram, a connection), or ""
// if nothing did.
func Listen(t *testing.T, port string) (heard func() string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	note := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			note(fmt.Sprintf("udp from %s: %q", from, buf[:n]))
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			note("tcp from " + c.RemoteAddr().String())
			c.Close()
		}
	}()
	return func() string {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(got, "; ")
	}
}
