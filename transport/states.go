package transport

import (
	"context"
	"sync"
)

// AfterStates asks a transport that can for the states of files as the
// undo journal compares them (journal.State), read on the host right
// after the command that ran with it in the same round trip (the SSH
// transport's served worker, confine.Serve's state request): a shell
// step's targets, without a file session and its round trips after the
// step. A hint: a transport that cannot leaves them unread, and the
// caller reads them itself.
type AfterStates struct {
	Paths     []string // absolute
	FileBytes int64    // the most bytes a file's content state is taken of

	mu     sync.Mutex
	states []FileState
}

// FileState is a path's state as the host read it: Value is
// journal.State's, or "" where the host left it to the caller; Size is
// the bytes read of the file.
type FileState struct {
	Value string
	Size  int64
}

// Set records the states read after a command (one a path, in order), or
// clears them (nil): each command that ran with a tells anew, so that
// the states are those after its last command.
func (a *AfterStates) Set(states []FileState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.states = states
}

// Take returns the states read after the last command and forgets them;
// nil when none were read.
func (a *AfterStates) Take() []FileState {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.states
	a.states = nil
	if len(s) != len(a.Paths) {
		return nil
	}
	return s
}

type afterStatesKey struct{}

// WithAfterStates has the commands run with ctx read a's states after
// them where the transport can.
func WithAfterStates(ctx context.Context, a *AfterStates) context.Context {
	return context.WithValue(ctx, afterStatesKey{}, a)
}

// AfterStatesOf returns what WithAfterStates put in ctx, or nil.
func AfterStatesOf(ctx context.Context) *AfterStates {
	a, _ := ctx.Value(afterStatesKey{}).(*AfterStates)
	return a
}
