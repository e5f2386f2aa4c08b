package journal

import "errors"

// ErrTooLarge is returned when a file, or a tree's file, holds more bytes
// than the journal keeps (Journal.MaxBytes).
var ErrTooLarge = errors.New("more than the undo journal keeps")
