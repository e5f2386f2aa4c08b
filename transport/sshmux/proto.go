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
	msgAliveCheck    = 0x10000004
	msgProxy         = 0x1000000f
	msgOK            = 0x80000001
	msgDenied        = 0x80000002
	msgFailure       = 0x80000003
	msgAlive         = 0x80000005
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
// master's pid, for MUX_S_PROXY and MUX_S_OK zero; MUX_S_FAILURE and
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
	case msgAlive:
		pid, rest, ok := getUint32(rest)
		if !ok || len(rest) != 0 {
			return 0, fmt.Errorf("%w: malformed alive reply", ErrProtocol)
		}
		return pid, nil
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
		what := "failed"
		if typ == msgDenied {
			what = "permission denied"
		}
		return 0, fmt.Errorf("master refused: %s: %q", what, reason)
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
