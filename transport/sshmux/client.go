package sshmux

import (
	"context"
	"fmt"
	"net"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// handshakeWait bounds the mux handshake when ctx has no deadline: a live
// master answers at once.
const handshakeWait = 10 * time.Second

// aliveCheckID is the request id of this package's MUX_C_ALIVE_CHECK; each
// check uses a connection of its own.
const aliveCheckID = 1

// AliveCheck asks the master listening on path whether it is alive
// (MUX_C_ALIVE_CHECK) and returns its pid. The socket is checked first
// (CheckSocket, then the peer's uid): ErrNoMaster when nothing listens,
// ErrUnsafeSocket when it is not the operator's.
func AliveCheck(ctx context.Context, path string) (int, error) {
	c, err := dialSocket(ctx, path)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	stop := bound(ctx, c)
	defer stop()
	if err := writeMessage(c, msgHello, protocolVersion); err != nil {
		return 0, fmt.Errorf("mux hello to %s: %w", path, err)
	}
	if err := writeMessage(c, msgAliveCheck, aliveCheckID); err != nil {
		return 0, fmt.Errorf("mux alive check to %s: %w", path, err)
	}
	typ, body, err := readMessage(c)
	if err != nil {
		return 0, fmt.Errorf("mux hello from %s: %w", path, err)
	}
	if err := parseHello(typ, body); err != nil {
		return 0, fmt.Errorf("mux hello from %s: %w", path, err)
	}
	if typ, body, err = readMessage(c); err != nil {
		return 0, fmt.Errorf("mux alive check on %s: %w", path, err)
	}
	pid, err := parseReply(typ, body, aliveCheckID)
	if err != nil {
		return 0, fmt.Errorf("mux alive check on %s: %w", path, err)
	}
	if typ != msgAlive {
		return 0, fmt.Errorf("mux alive check on %s: %w: reply %#x", path, ErrProtocol, typ)
	}
	return int(pid), nil
}

// Dial opens an SSH client through the master listening on path: the
// socket is checked as AliveCheck does, then put in proxy mode
// (MUX_C_PROXY), after which it carries SSH connection-protocol messages
// unencrypted to the master, which sends them over its own connection.
// Sessions, exec, subsystems (sftp), ptys and signals work as on a
// connection of one's own; no key exchange and no login take place, the
// master made them. Global requests are not carried by a master (it
// drops the client on any but tcpip-forward): keepalive@openssh.com is
// answered by an alive check of the master instead, others fail.
func Dial(ctx context.Context, path string) (*gossh.Client, error) {
	uc, err := dialSocket(ctx, path)
	if err != nil {
		return nil, err
	}
	stop := bound(ctx, uc)
	c, chans, reqs, err := gossh.NewControlClientConn(uc)
	stopped := stop()
	if err != nil {
		uc.Close()
		if !stopped && ctx.Err() != nil {
			return nil, fmt.Errorf("mux proxy on %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("mux proxy on %s: %w", path, err)
	}
	return gossh.NewClient(&conn{Conn: c, path: path}, chans, reqs), nil
}

// bound makes ctx's end (or handshakeWait) interrupt I/O on c until the
// returned stop is called; stop reports whether it stopped that in time.
func bound(ctx context.Context, c net.Conn) (stop func() bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(handshakeWait)
	}
	c.SetDeadline(deadline)
	undo := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return func() bool {
		ok := undo()
		c.SetDeadline(time.Time{})
		return ok
	}
}

// aliveWait bounds the alive check that stands in for a keepalive.
const aliveWait = 10 * time.Second

// conn is a proxy-mode connection whose global requests are kept from the
// master.
type conn struct {
	gossh.Conn
	path string
}

// SendRequest answers keepalive@openssh.com with an alive check of the
// master (a reply of false, like a server's to a request it does not
// know; an error when the master is gone) and refuses other global
// requests but tcpip-forward, which the master would answer by dropping
// the connection.
func (c *conn) SendRequest(name string, wantReply bool, payload []byte) (bool, []byte, error) {
	switch name {
	case "keepalive@openssh.com":
		ctx, cancel := context.WithTimeout(context.Background(), aliveWait)
		defer cancel()
		if _, err := AliveCheck(ctx, c.path); err != nil {
			return false, nil, err
		}
		return false, nil, nil
	case "tcpip-forward":
		return c.Conn.SendRequest(name, wantReply, payload)
	}
	return false, nil, fmt.Errorf("global request %q: not carried by a ControlMaster", name)
}
