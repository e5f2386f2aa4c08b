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

// Dial returns an SSH client whose sessions the master listening on path
// carries over its already authenticated connection: no key exchange and
// no login happen. The socket is checked and the master asked whether it
// is alive first (AliveCheck), so that a stale or foreign socket fails
// here. Each session is a passenger of the master (MUX_C_NEW_SESSION with
// the command and its three descriptors); exec, shell and subsystem
// (sftp) work, and the exit status arrives; a pty, environment variables
// and signals do not go through (their requests answer false), and a
// command killed by a signal ends without a status. Global requests
// are not carried either: keepalive@openssh.com is answered by an alive
// check of the master. One more connection to the master stays open,
// idle, while the client lives: when the master exits, it ends and the
// client closes (Wait returns).
//
// Not proxy mode (MUX_C_PROXY, x/crypto's NewControlClientConn): there a
// channel the server refuses (sshd's MaxSessions, shared with the
// operator's other passengers) stays in the master without a remote id,
// and OpenSSH's master (9.2, and mux.c as of 2026-08) exits with
// "chan_send_close2: no remote_id" when the proxy client disconnects,
// ending every session of the operator's.
func Dial(ctx context.Context, path string) (*gossh.Client, error) {
	if _, err := AliveCheck(ctx, path); err != nil {
		return nil, err
	}
	watch, err := dialSocket(ctx, path)
	if err != nil {
		return nil, err
	}
	stop := bound(ctx, watch)
	err = writeMessage(watch, msgHello, protocolVersion)
	if err == nil {
		var typ uint32
		var body []byte
		if typ, body, err = readMessage(watch); err == nil {
			err = parseHello(typ, body)
		}
	}
	stop()
	if err != nil {
		watch.Close()
		return nil, fmt.Errorf("mux hello from %s: %w", path, err)
	}
	p := &passengers{path: path, addr: &net.UnixAddr{Name: path, Net: "unix"}, open: map[*passenger]bool{}, done: make(chan struct{}), watch: watch}
	go p.watchMaster()
	chans := make(chan gossh.NewChannel)
	reqs := make(chan *gossh.Request)
	close(chans)
	close(reqs)
	return gossh.NewClient(p, chans, reqs), nil
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
