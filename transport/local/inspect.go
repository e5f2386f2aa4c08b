package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/autoshell/agent/transport"
)

// Inspect looks at p with system calls (transport.Inspector): RealPath,
// then stat and, for a regular file of at most readMax bytes, its content.
func (t *Transport) Inspect(ctx context.Context, p string, readMax int64) (transport.Inspection, error) {
	var in transport.Inspection
	real, err := t.RealPath(ctx, p)
	if err != nil {
		return in, err
	}
	in.Real = real
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return in, nil
	case err != nil:
		return in, fmt.Errorf("inspect %s: %w", p, unwrapPathError(err))
	}
	in.Info = fi
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		in.UID, in.GID, in.Owned, in.Links = int(st.Uid), int(st.Gid), true, int(st.Nlink)
	}
	if readMax > 0 && fi.Mode().IsRegular() && fi.Size() <= readMax {
		if b, err := os.ReadFile(real); err == nil && int64(len(b)) <= readMax {
			in.Content, in.Read = bytes.Clone(b), true
		}
	}
	return in, nil
}
