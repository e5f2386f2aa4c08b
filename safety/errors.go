package safety

import "errors"

var (
	// ErrRefused marks a path the file tools must not touch at all, whatever
	// the approval mode: a ".." escape, an empty path, a NUL byte.
	ErrRefused = errors.New("refused by safety policy")
	// ErrTooLarge is returned when a read or write exceeds the policy's cap.
	ErrTooLarge = errors.New("file too large for safety policy")
	// ErrBinary is returned when a write or edit would change a binary file.
	ErrBinary = errors.New("binary file refused by safety policy")
)
