package corpustest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Listen listens on 127.0.0.1:port, UDP and TCP, as the network attacks
// aim there; heard says what arrived (a datagram, a connection), or ""
// if nothing did. The corpus names the port, so the tests that listen on
// it take turns: go test runs packages at once (engine's and cmd/agent's
// corpus tests), and parallel tests of one package may both listen. The
// turn is a lock on a file in the temporary directory, held until the
// test ends.
func Listen(t *testing.T, port string) (heard func() string) {
	t.Helper()
	takeTurn(t, port)
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

// takeTurn holds an exclusive lock on os.TempDir()/agent-corpustest-PORT.lock
// until t ends; flock locks an open file description, so two tests of one
// process wait for each other as tests of two processes do.
func takeTurn(t *testing.T, port string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "agent-corpustest-"+port+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("corpus listener's lock: %v", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("corpus listener's lock: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing the last descriptor unlocks
}
