package sshmux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The messages of PROTOCOL.mux (openssh-portable's mux.c) this package
// sends or understands.
const (
	msgHello         = 0x00000001
	msgNewSession    = 0x10000002
	msgAliveCheck    = 0x10000004
	msgProxy         = 0x1000000f
	msgOK            = 0x80000001
	msgDenied        = 0x80000002
	msgFailure       = 0x80000003
	msgExit          = 0x80000004
	msgAlive         = 0x80000005
	msgSessionOpened = 0x80000006
	msgTTYAllocFail  = 0x80000008
	msgProxyReply    = 0x8000000f
	protocolVersion  = 4
	maxMessageLength = 64 << 10 // a reply of the mux protocol is a few bytes; a master sending more is not one
)

// ErrProtocol means the master answered something PROTOCOL.mux does not
// allow at that point.
var ErrProtocol = errors.New("mux protocol error")

// writeMessage sends one mux message: its length, then the uint32 words.
func writeMessage(w io.Writer, words ...uint32) error {
	b := make([]byte, 4+4*len(words))
	binary.BigEndian.PutUint32(b, uint32(4*len(words)))
	for i, v := range words {
		binary.BigEndian.PutUint32(b[4+4*i:], v)
	}
	_, err := w.Write(b)
	return err
}

// readMessage reads one mux message and returns its type and body.
func readMessage(r io.Reader) (typ uint32, body []byte, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 4 || n > maxMessageLength {
		return 0, nil, fmt.Errorf("%w: message of %d bytes", ErrProtocol, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, fmt.Errorf("%w: message cut short: %w", ErrProtocol, err)
	}
	return binary.BigEndian.Uint32(b), b[4:], nil
}

// parseHello checks the master's MUX_MSG_HELLO: protocol version 4, then
// name/value extension strings (none are defined; they are skipped).
func parseHello(typ uint32, body []byte) error {
	if typ != msgHello {
		return fmt.Errorf("%w: expected hello, got message %#x", ErrProtocol, typ)
	}
	v, rest, ok := getUint32(body)
	if !ok {
		return fmt.Errorf("%w: hello without a version", ErrProtocol)
	}
	if v != protocolVersion {
		return fmt.Errorf("%w: master speaks mux version %d, not %d", ErrProtocol, v, protocolVersion)
	}
	for len(rest) > 0 {
		var name, value []byte
		if name, rest, ok = getString(rest); !ok {
			return fmt.Errorf("%w: hello extension name cut short", ErrProtocol)
		}
		if value, rest, ok = getString(rest); !ok {
			return fmt.Errorf("%w: hello extension %q without a value", ErrProtocol, name)
		}
		_ = value
	}
	return nil
}

// parseReply reads the master's answer to request id: for MUX_S_ALIVE the
// master's pid, for MUX_S_SESSION_OPENED the session id, for MUX_S_PROXY
// and MUX_S_OK zero; MUX_S_FAILURE and
// MUX_S_PERMISSION_DENIED become errors carrying the master's reason.
func parseReply(typ uint32, body []byte, id uint32) (uint32, error) {
	rid, rest, ok := getUint32(body)
	if !ok {
		return 0, fmt.Errorf("%w: reply %#x without a request id", ErrProtocol, typ)
	}
	if rid != id {
		return 0, fmt.Errorf("%w: reply to request %d, expected %d", ErrProtocol, rid, id)
	}
	switch typ {
	case msgAlive, msgSessionOpened:
		v, rest, ok := getUint32(rest)
		if !ok || len(rest) != 0 {
			return 0, fmt.Errorf("%w: malformed reply %#x", ErrProtocol, typ)
		}
		return v, nil
	case msgProxyReply, msgOK:
		if len(rest) != 0 {
			return 0, fmt.Errorf("%w: reply %#x with %d bytes too many", ErrProtocol, typ, len(rest))
		}
		return 0, nil
	case msgDenied, msgFailure:
		reason, rest, ok := getString(rest)
		if !ok || len(rest) != 0 {
			return 0, fmt.Errorf("%w: malformed failure reply", ErrProtocol)
		}
		if typ == msgDenied {
			return 0, fmt.Errorf("master refused: permission denied: %q", reason)
		}
		return 0, &RefusedError{Reason: string(reason)}
	}
	return 0, fmt.Errorf("%w: unexpected reply %#x", ErrProtocol, typ)
}

func getUint32(b []byte) (uint32, []byte, bool) {
	if len(b) < 4 {
		return 0, b, false
	}
	return binary.BigEndian.Uint32(b), b[4:], true
}

func getString(b []byte) ([]byte, []byte, bool) {
	n, rest, ok := getUint32(b)
	if !ok || uint64(n) > uint64(len(rest)) {
		return nil, b, false
	}
	return rest[:n], rest[n:], true
}

// RefusedError is the master's MUX_S_FAILURE, with its reason. The one
// for a session the server refused to open (sshd's MaxSessions, counted
// over the master's whole connection) is Refused.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return fmt.Sprintf("master refused: failed: %q", e.Reason) }

// sessionRefused is the reason mux.c gives when the server refused the
// session channel: nothing ran.
const sessionRefused = "Session open refused by peer"

// newSession is MUX_C_NEW_SESSION for a command (or, with subsystem, a
// subsystem's name): no tty, no X11 or agent forwarding, no escape
// character, no environment.
func newSession(id uint32, command string, subsystem bool) []byte {
	var sub uint32
	if subsystem {
		sub = 1
	}
	b := make([]byte, 4, 64+len(command))
	for _, v := range []uint32{msgNewSession, id, 0 /* reserved "" */, 0, 0, 0, sub, 0xffffffff, 0 /* term "" */} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(command)))
	b = append(b, command...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseEvent reads a message the master sends a passenger after its
// session opened: MUX_S_EXIT_MESSAGE for session sid (the command's exit
// status) or MUX_S_TTY_ALLOC_FAIL (ignored: agent asks for no tty).
func parseEvent(typ uint32, body []byte, sid uint32) (status uint32, exited bool, err error) {
	id, rest, ok := getUint32(body)
	if !ok {
		return 0, false, fmt.Errorf("%w: message %#x without a session id", ErrProtocol, typ)
	}
	if id != sid {
		return 0, false, fmt.Errorf("%w: message %#x for session %d, not %d", ErrProtocol, typ, id, sid)
	}
	switch typ {
	case msgExit:
		v, rest, ok := getUint32(rest)
		if !ok || len(rest) != 0 {
			return 0, false, fmt.Errorf("%w: malformed exit message", ErrProtocol)
		}
		return v, true, nil
	case msgTTYAllocFail:
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("%w: unexpected message %#x", ErrProtocol, typ)
}
