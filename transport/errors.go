package transport

import "errors"

var (
	// ErrTimeout is returned by Run when Command.Timeout passed and the
	// command was killed.
	ErrTimeout = errors.New("command timed out")
	// ErrConnection marks a lost or failed connection to the host.
	ErrConnection = errors.New("connection to host failed")
	// ErrClosed is returned by methods called after Close.
	ErrClosed = errors.New("transport closed")
	// ErrBecome marks a failure to become another user (transport/become):
	// sudo refused or is missing. Like a lost connection it is the host's
	// problem, not the step's.
	ErrBecome = errors.New("become failed")
	// ErrSpecialFile is ReadFile's refusal of a fifo, socket or device:
	// a fifo's open waits for a writer for ever, a device's may do
	// anything, so it is not opened for reading.
	ErrSpecialFile = errors.New("a fifo, socket or device: not opened for reading")
)
