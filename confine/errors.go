package confine

// wrapped is msg: err, unwrapping to err: fmt.Errorf's %w without fmt,
// which the launcher does not link (docs/decisions.md, "The launcher kept
// small").
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg + ": " + e.err.Error() }
func (e *wrapped) Unwrap() error { return e.err }

// wrap is msg: err.
func wrap(msg string, err error) error { return &wrapped{msg, err} }
