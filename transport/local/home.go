package local

import (
	"context"

	"github.com/autoshell/agent/transport"
)

// HomeDir is the home directory "~" means for this transport (the
// transport.HomeDirer capability): the tools and the planner's safety check
// need not start a shell to print $HOME, which commands inherit from this
// process anyway.
func (t *Transport) HomeDir(ctx context.Context) (string, error) {
	if t.closed.Load() {
		return "", transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return t.home, nil
}
