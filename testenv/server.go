package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHServerOptions configure NewSSHServer.
type SSHServerOptions struct {
	// User is the login user; "" means the current user's name.
	User string
	// Home is the home directory commands and SFTP start in; "" means a new
	// temporary directory, removed by Close.
	Home string
	// MaxSessions is the number of concurrent session channels per
	// connection; 0 means 10, like sshd. Further opens are rejected with
	// ssh.ResourceShortage.
	MaxSessions int
	// MaxExec, when positive, is the longest exec request the server takes:
	// a longer one ends the whole connection, as Dropbear does past 9,000
	// bytes ("Exit: String too long"); when negative, a longer one is
	// refused (a false reply) and the connection stays. 0: no limit.
	MaxExec int
}

// sessionSlotGrace is how long an open at the MaxSessions limit waits for a
// slot before it is rejected. A session the client has just closed is
// released asynchronously (its processes are killed and reaped first); the
// grace keeps "close one, open one" at the limit from failing at random.
const sessionSlotGrace = 500 * time.Millisecond

// handshakeTimeout bounds the SSH handshake and authentication, like sshd's
// LoginGraceTime.
const handshakeTimeout = 30 * time.Second

// SSHServer is an in-process SSH and SFTP server on 127.0.0.1. It accepts
// only Host.User with the key in Host.IdentityFile, runs "exec" requests
// with "/bin/sh -c" in Host.Home as the current OS user, and serves the
// "sftp" subsystem rooted at Host.Home for relative paths. Channels of type
// "direct-tcpip" to loopback addresses are forwarded (for ProxyJump tests).
type SSHServer struct {
	Host

	maxSessions int
	maxExec     int
	config      *ssh.ServerConfig
	clientKey   []byte // marshalled authorised public key
	ln          net.Listener
	dirs        []string // temporary directories removed by Close

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	groups []int // process groups of commands started, for Close
	closed bool
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// StartSSHServer starts an SSHServer, fails t on error and closes the
// server when t ends.
func StartSSHServer(t testing.TB, opts SSHServerOptions) *SSHServer {
	t.Helper()
	s, err := NewSSHServer(opts)
	if err != nil {
		t.Fatalf("start in-process SSH server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close in-process SSH server: %v", err)
		}
	})
	return s
}

// NewSSHServer starts an in-process SSH server listening on 127.0.0.1:0.
// Close releases it.
func NewSSHServer(opts SSHServerOptions) (s *SSHServer, err error) {
	s = &SSHServer{maxSessions: opts.MaxSessions, maxExec: opts.MaxExec, conns: map[net.Conn]struct{}{}}
	if s.maxSessions <= 0 {
		s.maxSessions = 10
	}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()

	s.User = opts.User
	if s.User == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("current user: %w", err)
		}
		s.User = u.Username
	}
	dir, err := tempDir("testenv-sshserver-*")
	if err != nil {
		return nil, err
	}
	s.dirs = append(s.dirs, dir)
	s.Home = opts.Home
	if s.Home == "" {
		s.Home = filepath.Join(dir, "home")
		if err := os.Mkdir(s.Home, 0o755); err != nil {
			return nil, fmt.Errorf("create home: %w", err)
		}
	} else if s.Home, err = filepath.Abs(s.Home); err != nil {
		return nil, fmt.Errorf("home %q: %w", opts.Home, err)
	} else if fi, err := os.Stat(s.Home); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("home %q is not a directory (%v)", s.Home, err)
	}

	hostSigner, _, err := newSigner()
	if err != nil {
		return nil, err
	}
	s.HostKey = hostSigner.PublicKey()
	s.config = &ssh.ServerConfig{PublicKeyCallback: s.checkKey}
	s.config.AddHostKey(hostSigner)

	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.Alias = "testhost"
	s.Addr = s.ln.Addr().String()

	identity, clientPub, err := newClientKey(dir)
	if err != nil {
		return nil, err
	}
	s.clientKey = clientPub.Marshal()
	if err := writeClientConfig(&s.Host, dir, identity); err != nil {
		return nil, err
	}

	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// tempDir creates a temporary directory and returns its path with symbolic
// links resolved, so that "pwd", SFTP realpath and Home agree.
func tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("create temp dir: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("resolve temp dir: %w", err)
	}
	return real, nil
}

func (s *SSHServer) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if meta.User() != s.User {
		return nil, fmt.Errorf("unknown user %q", meta.User())
	}
	if !bytes.Equal(key.Marshal(), s.clientKey) {
		return nil, fmt.Errorf("key %s not authorised for %q", ssh.FingerprintSHA256(key), meta.User())
	}
	return nil, nil
}

// Close closes the listener and every connection, kills running commands,
// waits for all server goroutines and removes the temporary directories.
// It is idempotent.
func (s *SSHServer) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		if s.ln != nil {
			s.ln.Close()
		}
		s.wg.Wait()
		s.killGroups()
		var errs []error
		for _, d := range s.dirs {
			if err := os.RemoveAll(d); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// track registers c for Close; it reports false when the server is closed.
func (s *SSHServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *SSHServer) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *SSHServer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

// serveConn runs one SSH connection until it ends, then waits for its
// sessions (whose processes are killed when the connection goes).
func (s *SSHServer) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer s.untrack(c)
	defer c.Close()

	c.SetDeadline(time.Now().Add(handshakeTimeout))
	sconn, chans, reqs, err := ssh.NewServerConn(c, s.config)
	if err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	defer sconn.Close()

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		ssh.DiscardRequests(reqs) // replies false, like OpenSSH to unknown requests
	}()

	slots := make(chan struct{}, s.maxSessions)
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			if !acquireSlot(slots) {
				nch.Reject(ssh.ResourceShortage, fmt.Sprintf("no more sessions (MaxSessions %d)", s.maxSessions))
				continue
			}
			var once sync.Once
			release := func() { once.Do(func() { <-slots }) }
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer release()
				s.handleSession(sconn, nch, release)
			}()
		case "direct-tcpip":
			wg.Add(1)
			go func() {
				defer wg.Done()
				handleDirectTCPIP(nch)
			}()
		default:
			nch.Reject(ssh.UnknownChannelType, "unknown channel type "+nch.ChannelType())
		}
	}
}

func acquireSlot(slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(sessionSlotGrace)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// handleDirectTCPIP forwards a "direct-tcpip" channel to a loopback address.
func handleDirectTCPIP(nch ssh.NewChannel) {
	var req struct {
		Addr     string
		Port     uint32
		OrigAddr string
		OrigPort uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &req); err != nil {
		nch.Reject(ssh.ConnectionFailed, "malformed direct-tcpip request")
		return
	}
	if ip := net.ParseIP(req.Addr); req.Addr != "localhost" && (ip == nil || !ip.IsLoopback()) {
		nch.Reject(ssh.Prohibited, "testenv forwards to loopback addresses only")
		return
	}
	target, err := net.DialTimeout("tcp", net.JoinHostPort(req.Addr, fmt.Sprint(req.Port)), 10*time.Second)
	if err != nil {
		nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	defer target.Close()
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	// The channel's requests end when the channel is closed (by the client
	// or with the connection); then the target goes too.
	closed := make(chan struct{})
	go func() {
		ssh.DiscardRequests(reqs)
		target.Close()
		close(closed)
	}()
	defer func() { <-closed }()
	defer ch.Close()

	done := make(chan struct{}, 2)
	go func() {
		io.Copy(target, ch)
		target.(*net.TCPConn).CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		io.Copy(ch, target)
		ch.CloseWrite()
		done <- struct{}{}
	}()
	<-done
	<-done
}
