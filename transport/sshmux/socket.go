package sshmux

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"

	"github.com/autoshell/agent/transport"
)

// ErrNoMaster means no master listens on the control socket: the path does
// not exist (the error then wraps fs.ErrNotExist too), or nothing accepts
// connections on it (a stale socket left by a master that died). The
// caller dials on its own.
var ErrNoMaster = errors.New("no ControlMaster listening")

// ErrUnsafeSocket means the control socket is not one the operator alone
// controls: not a socket, owned by another user, or writable by others.
// Whoever controls it could read and inject everything sent through it.
var ErrUnsafeSocket = errors.New("control socket not safe to use")

// CheckSocket reports whether path is a Unix socket owned by the current
// user that neither the group nor others may write to (OpenSSH makes it
// 0600). A missing path is ErrNoMaster; anything else wrong wraps
// ErrUnsafeSocket.
func CheckSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w on %s: %w", ErrNoMaster, path, fs.ErrNotExist)
	}
	if err != nil {
		return fmt.Errorf("control socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%w: %s is not a socket (%s)", ErrUnsafeSocket, path, fi.Mode().Type())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: %s: no owner known", ErrUnsafeSocket, path)
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w: %s is owned by uid %d, not by uid %d", ErrUnsafeSocket, path, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by others (mode %#o)", ErrUnsafeSocket, path, fi.Mode().Perm())
	}
	return nil
}

// dialSocket checks path (CheckSocket), connects to it and checks that
// the process at the other end runs as the current user: a socket swapped
// between the check and the connect is refused too.
func dialSocket(ctx context.Context, path string) (*net.UnixConn, error) {
	if err := CheckSocket(path); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w on %s: %w", ErrNoMaster, path, err)
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w on %s (stale socket): %w", ErrNoMaster, path, err)
		}
		return nil, fmt.Errorf("connect to control socket %s: %w", path, err)
	}
	uc := c.(*net.UnixConn)
	uid, err := transport.PeerUID(uc)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("%w: %s: peer credentials: %w", ErrUnsafeSocket, path, err)
	}
	if me := os.Getuid(); uid != me {
		uc.Close()
		return nil, fmt.Errorf("%w: the master on %s runs as uid %d, not as uid %d", ErrUnsafeSocket, path, uid, me)
	}
	return uc, nil
}
