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
)
