package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pkg/sftp"

	"github.com/autoshell/agent/transport"
)

// Inspect looks at p over SFTP (transport.Inspector): RealPath's lstats,
// which say what is at the real path too (one round trip for a path
// without links), a stat only when they do not, and the content of a
// regular file of at most readMax bytes.
func (t *Transport) Inspect(ctx context.Context, p string, readMax int64) (transport.Inspection, error) {
	var in transport.Inspection
	if err := ctx.Err(); err != nil {
		return in, fmt.Errorf("inspect %s: %w", p, err)
	}
	if t.viaShell(ctx) {
		return t.shellInspect(ctx, p, readMax)
	}
	c, sc, home, err := t.files(ctx)
	if err != nil {
		return in, fmt.Errorf("inspect %s: %w", p, err)
	}
	if !strings.HasPrefix(p, "/") {
		p = t.expandHome(p, home)
	}
	type found struct {
		real  string
		fi    fs.FileInfo
		known bool
	}
	f, err := call(ctx, func() (found, error) {
		real, fi, known, err := realPathInfo(sc, p)
		return found{real, fi, known}, err
	})
	if err != nil {
		return in, t.fileErr(c, sc, "inspect", p, err)
	}
	in.Real, in.Info = f.real, f.fi
	if !f.known {
		fi, err := call(ctx, func() (fs.FileInfo, error) { return sc.Stat(f.real) })
		if err == nil {
			in.Info = fi
		} else if err = t.fileErr(c, sc, "inspect", p, err); !errors.Is(err, fs.ErrNotExist) {
			return in, err
		}
	}
	if in.Info == nil {
		return in, nil
	}
	if st, ok := in.Info.Sys().(*sftp.FileStat); ok {
		in.UID, in.GID, in.Owned = int(st.UID), int(st.GID), true
	}
	if readMax > 0 && in.Info.Mode().IsRegular() && in.Info.Size() <= readMax {
		var b bytes.Buffer
		if _, err := t.ReadFile(ctx, in.Real, &limited{w: &b, n: readMax}); err == nil {
			in.Content, in.Read = b.Bytes(), true
		} else if ctx.Err() != nil {
			return in, fmt.Errorf("inspect %s: %w", p, ctx.Err())
		}
	}
	return in, nil
}

// limited fails a write past n bytes: a file that grew while read.
type limited struct {
	w *bytes.Buffer
	n int64
}

func (l *limited) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("more than %d bytes", l.n)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
