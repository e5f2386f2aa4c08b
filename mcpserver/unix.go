package mcpserver

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/autoshell/agent/transport"
)

// ListenUnix listens on a unix socket at path for the HTTP transport: the
// socket is made 0600 in a directory others cannot write, and a
// connection whose peer is not this process's uid is closed before it
// is read (the kernel's peer credentials, SO_PEERCRED). A stale socket
// of a dead server is replaced; any other file there is an error.
func ListenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("listen %s: exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("listen %s: another server is listening there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen %s: %w", path, err)
		}
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	} else if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return nil, fmt.Errorf("listen %s: %s is writable by others", path, dir)
	}
	old := umask(0o177)
	ln, err := net.Listen("unix", path)
	umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	return &uidListener{Listener: ln, uid: os.Getuid()}, nil
}

// uidListener accepts only connections of its uid's processes.
type uidListener struct {
	net.Listener
	uid int
}

func (l *uidListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			c.Close()
			return nil, errors.New("unix listener: not a unix connection")
		}
		if uid, err := transport.PeerUID(uc); err == nil && uid == l.uid {
			return c, nil
		}
		c.Close() // another user's: nothing is read
	}
}
