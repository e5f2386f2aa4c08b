package ssh

import "errors"

var (
	// ErrHostKey marks a host key that was refused: unknown under
	// StrictHostKeyChecking yes or without a terminal to confirm it, not
	// confirmed, revoked, or changed (the error then carries OpenSSH's
	// warning).
	ErrHostKey = errors.New("host key verification failed")
	// ErrAuth marks a failed authentication; the error lists what was
	// offered and why keys were skipped.
	ErrAuth = errors.New("authentication failed")
	// ErrDropped marks a connection the server closed before it sent its
	// SSH version: what sshd does past MaxStartups (too many connections
	// not yet authenticated). The host is up and a later attempt may get
	// in; a batch retries it (engine).
	ErrDropped = errors.New("connection dropped before the SSH handshake")
)
