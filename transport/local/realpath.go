package local

import (
	"context"
	"fmt"

	"github.com/autoshell/agent/transport"
)

// RealPath returns where p really is, as `readlink -f` finds it, without
// starting a process: "~" is the home directory, a relative p is taken
// from the working directory, and every symbolic link is followed, in the
// middle and at the end. The last component need not exist (nor the target
// of a symbolic link at the end): then its directory is resolved and the
// name appended. A missing or non-directory component before it is an
// error (fs.ErrNotExist, ENOTDIR), as is a loop of links (ELOOP).
func (t *Transport) RealPath(ctx context.Context, p string) (string, error) {
	q, err := t.expand(p)
	if err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	real, err := RealPath(q)
	if err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	return real, nil
}

// RealPath is Transport.RealPath without "~": p is absolute or relative to
// the working directory (transport.LocalRealPath).
func RealPath(p string) (string, error) { return transport.LocalRealPath(p) }
