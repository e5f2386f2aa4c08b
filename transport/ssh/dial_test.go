package ssh

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// silentListener accepts connections and never says anything.
func silentListener(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestHandshakeDeadline(t *testing.T) {
	port := silentListener(t)
	cfg := &HostConfig{Alias: "mute", HostName: "127.0.0.1", Port: port, IdentityAgent: "none",
		ConnectTimeout: 300 * time.Millisecond, StrictHostKeyChecking: "yes",
		UserKnownHostsFiles: []string{filepath.Join(t.TempDir(), "known_hosts")}}
	start := time.Now()
	_, err := Dial(context.Background(), cfg, Options{})
	if d := time.Since(start); !errors.Is(err, transport.ErrConnection) || !strings.Contains(err.Error(), "ConnectTimeout") || d > 2*time.Second {
		t.Errorf("after %v: %v", d, err)
	}

	cfg.ConnectTimeout = 0 // 30 s default; ctx ends first
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = Dial(ctx, cfg, Options{})
	if d := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || d > 2*time.Second {
		t.Errorf("ctx: after %v: %v", d, err)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	if _, err := Dial(context.Background(), cfg, Options{}); !errors.Is(err, transport.ErrConnection) {
		t.Errorf("refused port: %v", err)
	}
}

func TestProxyJump(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	jump := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	target := testenv.StartSSHServer(t, testenv.SSHServerOptions{})

	t.Run("through sshd", func(t *testing.T) {
		hop, proxy := viaProxy(t, d.Host)
		cfg := hostConfig(target.Host)
		cfg.ProxyJump = []*HostConfig{hop}
		tr := dial(t, cfg, Options{})
		res, err := tr.Run(context.Background(), transport.Command{Command: "pwd"})
		if err != nil || strings.TrimSpace(res.Stdout) != target.Home {
			t.Fatalf("pwd on target: %q, %v", res.Stdout, err)
		}
		if h := tr.Host(); h.Name != target.Alias || h.Addr != target.Addr || h.Kind != "ssh" || h.User != target.User {
			t.Errorf("Host() = %+v", h)
		}
		// The target connection runs inside the jump host's: cutting the
		// jump host's TCP connection ends it.
		c := tr.conn
		proxy.CutAll()
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
			t.Fatal("target connection alive after the jump host's was cut")
		}
		if res, err := tr.Run(context.Background(), transport.Command{Command: "echo redialled"}); err != nil || res.Stdout != "redialled\n" {
			t.Errorf("Run after the jump host came back: %+v, %v", res, err)
		}
	})

	t.Run("two hops", func(t *testing.T) {
		cfg := hostConfig(target.Host)
		cfg.ProxyJump = []*HostConfig{hostConfig(jump.Host), hostConfig(d.Host)}
		tr := dial(t, cfg, Options{})
		var out bytes.Buffer
		if _, err := tr.WriteFile(context.Background(), "~/hop.txt", strings.NewReader("via two hops"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.ReadFile(context.Background(), target.Home+"/hop.txt", &out); err != nil || out.String() != "via two hops" {
			t.Fatalf("read back %q, %v", out.String(), err)
		}
		c := tr.conn
		tr.Close()
		for i, hop := range c.hops {
			done := make(chan struct{})
			go func() { hop.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Errorf("hop %d still open after Close", i)
			}
		}
	})

	t.Run("jump host key checked", func(t *testing.T) {
		hop := hostConfig(jump.Host)
		hop.UserKnownHostsFiles = []string{knownHostsFile(t, jump.Addr, newKey(t))}
		cfg := hostConfig(target.Host)
		cfg.ProxyJump = []*HostConfig{hop}
		err := tryDial(t, cfg, Options{})
		if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "jump host") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestKeepaliveDetectsDeadPeer(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	cfg, proxy := viaProxy(t, srv.Host)
	cfg.ServerAliveInterval, cfg.ServerAliveCountMax = 200*time.Millisecond, 3
	tr := dial(t, cfg, Options{})
	done := make(chan error, 1)
	go func() {
		_, err := tr.Run(context.Background(), transport.Command{Command: "sleep 60"})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	proxy.Stall(true)
	start := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, transport.ErrConnection) || !strings.Contains(err.Error(), "keepalive") {
			t.Errorf("err = %v", err)
		}
		t.Logf("dead peer noticed after %v", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waiting 5 s after the peer went silent")
	}
	proxy.Stall(false)
	if res, err := tr.Run(context.Background(), transport.Command{Command: "echo back"}); err != nil || res.Stdout != "back\n" {
		t.Errorf("after the peer came back: %+v, %v", res, err)
	}
}

func TestReconnect(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	cfg, proxy := viaProxy(t, srv.Host)
	tr := dial(t, cfg, Options{})
	ctx := context.Background()
	if _, err := tr.Stat(ctx, "~"); err != nil { // SFTP open on the first connection
		t.Fatal(err)
	}

	proxy.CutAll()
	if res, err := tr.Run(ctx, transport.Command{Command: "echo again"}); err != nil || res.Stdout != "again\n" {
		t.Errorf("Run after the connection was cut: %+v, %v", res, err)
	}
	proxy.CutAll()
	if _, err := tr.Stat(ctx, "~"); err != nil {
		t.Errorf("Stat after the connection was cut: %v", err)
	}

	// A command running when the connection drops fails with what it printed.
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := tr.Run(ctx, transport.Command{Command: "echo before; sleep 30"})
		if !errors.Is(err, transport.ErrConnection) || res.Stdout != "before\n" {
			t.Errorf("Run cut midway: %+v, %v", res, err)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	proxy.CutAll()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waiting after its connection was cut")
	}

	// One attempt per call: with the host gone, calls fail fast.
	proxy.Close()
	start := time.Now()
	if _, err := tr.Run(ctx, transport.Command{Command: "true"}); !errors.Is(err, transport.ErrConnection) || time.Since(start) > 2*time.Second {
		t.Errorf("host gone: %v after %v", err, time.Since(start))
	}
}
