package ssh

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proxyCommand is the command line ssh runs for h's ProxyCommand
// (sshconnect.c expand_proxy_command): "exec " + the command with %h %p
// %r %n %k %% expanded.
func proxyCommand(h *HostConfig) (string, error) {
	port := h.Port
	if port == 0 {
		port = 22
	}
	cmd, err := percentExpand("exec "+h.ProxyCommand, map[byte]string{
		'h': h.HostName, 'p': strconv.Itoa(port), 'r': userOf(h), 'n': h.Alias, 'k': h.Alias,
	})
	if err != nil {
		return "", fmt.Errorf("ProxyCommand %q: %w", h.ProxyCommand, err)
	}
	return cmd, nil
}

// userShell is the shell ssh runs ProxyCommand and Match exec with:
// $SHELL, else /bin/sh.
func userShell() string {
	if s := os.Getenv("SHELL"); s != "" {
		return s
	}
	return "/bin/sh"
}

// dialProxyCommand runs h's ProxyCommand through the user's shell, as ssh
// does, with its stdin and stdout on one end of a socket pair; the other
// end is the connection. Its stderr is kept (the last 2 KiB) for errors.
// Closing the connection hangs the command up (SIGHUP, as ssh does at exit).
func dialProxyCommand(ctx context.Context, h *HostConfig) (net.Conn, error) {
	line, err := proxyCommand(h)
	if err != nil {
		return nil, err
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ProxyCommand: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "proxycommand"), os.NewFile(uintptr(fds[1]), "proxycommand-child")
	defer theirs.Close()
	cmd := exec.Command(userShell(), "-c", line)
	cmd.Stdin, cmd.Stdout = theirs, theirs
	pc := &proxyConn{cmd: cmd, stderr: &tailBuffer{max: 2048}, line: line}
	cmd.Stderr = pc.stderr
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("ProxyCommand %q: %w", h.ProxyCommand, err)
	}
	pc.done = make(chan struct{})
	go func() { pc.waitErr = cmd.Wait(); close(pc.done) }()
	nc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		pc.hangUp()
		return nil, fmt.Errorf("ProxyCommand %q: %w", h.ProxyCommand, err)
	}
	pc.Conn = nc
	if ctx.Err() != nil {
		pc.Close()
		return nil, ctx.Err()
	}
	return pc, nil
}

// proxyConn is the connection to a ProxyCommand.
type proxyConn struct {
	net.Conn
	cmd     *exec.Cmd
	line    string
	stderr  *tailBuffer
	done    chan struct{}
	waitErr error
	once    sync.Once
}

func (c *proxyConn) Close() error {
	err := c.Conn.Close()
	c.hangUp()
	return err
}

func (c *proxyConn) hangUp() {
	c.once.Do(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Signal(syscall.SIGHUP)
		}
	})
}

// explain adds what the command said, and its exit, to a failed
// handshake's error.
func (c *proxyConn) explain(err error) error {
	select { // a command that failed is usually exiting: give it a moment
	case <-c.done:
	case <-time.After(time.Second):
	}
	msg := strings.TrimSpace(c.stderr.String())
	select {
	case <-c.done:
		if c.waitErr != nil {
			msg = strings.TrimSpace(c.waitErr.Error() + ": " + msg)
		} else if msg == "" {
			msg = "it exited"
		}
	default:
	}
	if msg == "" {
		return err
	}
	return fmt.Errorf("%w (ProxyCommand %s: %s)", err, strings.TrimPrefix(c.line, "exec "), msg)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
