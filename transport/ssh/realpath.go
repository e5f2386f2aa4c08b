package ssh

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/pkg/sftp"
)

// maxLinks is how many symbolic links RealPath follows before it gives up
// with ELOOP (Linux's limit for one path lookup).
const maxLinks = 40

// RealPath returns where p really is on the host, as `readlink -f` finds
// it, without running a command: "~" and a relative p are taken from the
// remote home, every symbolic link is followed, in the middle and at the
// end, and "." and ".." are applied to the directories the links lead to.
// The last component need not exist (nor the target of a symbolic link at
// the end): then its directory is resolved and the name appended. A
// missing or non-directory component before it is an error (fs.ErrNotExist,
// ENOTDIR), as is a loop of links (ELOOP).
//
// It resolves on the client with SFTP lstat and readlink, not with the
// SFTP realpath request: what that request does with symbolic links is up
// to the server (OpenSSH follows them, pkg/sftp's server does not), and the
// safety check needs them followed. The lstats of a path's components go
// out at once, so a path without links costs one round trip and each link
// one or two more.
func (t *Transport) RealPath(ctx context.Context, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	if t.viaShell(ctx) {
		return t.shellRealPath(ctx, p)
	}
	c, sc, home, err := t.files(ctx)
	if err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	if !strings.HasPrefix(p, "/") {
		p = t.expandHome(p, home)
	} // else as given: expandHome cleans "link/.." away lexically
	real, err := call(ctx, func() (string, error) { return realPath(sc, p) })
	if err != nil {
		return "", t.fileErr(c, sc, "realpath", p, err)
	}
	return real, nil
}

// linkReader is the part of an SFTP client realPath uses.
type linkReader interface {
	Lstat(p string) (fs.FileInfo, error)
	ReadLink(p string) (string, error)
}

var _ linkReader = (*sftp.Client)(nil)

// realPath resolves the absolute path p on the host behind sc (see
// Transport.RealPath).
func realPath(sc linkReader, p string) (string, error) {
	real, _, _, err := realPathInfo(sc, p)
	return real, err
}

// realPathInfo is realPath, and what is at the real path when that is
// known without another lookup (known): the lstat of the last name it
// resolved (no link there), nil when that name is missing. It is not
// known when the path ends in "." or "..", or is "/".
func realPathInfo(sc linkReader, p string) (real string, fi fs.FileInfo, known bool, err error) {
	if !path.IsAbs(p) {
		return "", nil, false, fmt.Errorf("realpath %q: not an absolute path", p)
	}
	var final fs.FileInfo
	real = "/" // resolved so far: no links in it
	rest := components(p)
	links := 0
	for len(rest) > 0 {
		// The plain names up to the next "." or "..", looked up at once as
		// if none were a link; the first link or missing name ends the batch.
		n := 0
		for n < len(rest) && rest[n] != "." && rest[n] != ".." {
			n++
		}
		if n == 0 {
			if rest[0] == ".." {
				real = path.Dir(real)
			}
			rest, final = rest[1:], nil
			continue
		}
		infos := lstatAll(sc, real, rest[:n])
		for i, r := range infos {
			name := path.Join(real, rest[0])
			last := len(rest) == 1
			switch {
			case errors.Is(r.err, fs.ErrNotExist) && last:
				return name, nil, true, nil // readlink -f: the last name may be missing
			case r.err != nil:
				return "", nil, false, r.err
			case r.fi.Mode()&fs.ModeSymlink != 0:
				if links++; links > maxLinks {
					return "", nil, false, &fs.PathError{Op: "realpath", Path: p, Err: syscall.ELOOP}
				}
				target, err := sc.ReadLink(name)
				if err != nil {
					return "", nil, false, err
				}
				if target == "" {
					return "", nil, false, &fs.PathError{Op: "readlink", Path: name, Err: syscall.ENOENT}
				}
				if path.IsAbs(target) {
					real = "/"
				}
				final = nil
				rest = append(components(target), rest[1:]...)
			case !last && !r.fi.IsDir():
				return "", nil, false, &fs.PathError{Op: "realpath", Path: name, Err: syscall.ENOTDIR}
			default:
				real, rest, final = name, rest[1:], r.fi
				if i < len(infos)-1 {
					continue // the next lookup in the batch still applies
				}
			}
			break // a link changed the path, or the batch is used up
		}
	}
	return real, final, final != nil, nil
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// lstatAll looks up dir/names[0], dir/names[0]/names[1], … concurrently
// (pkg/sftp keeps several requests in flight on one channel) and returns
// the results in order.
func lstatAll(sc linkReader, dir string, names []string) []lstatResult {
	out := make([]lstatResult, len(names))
	var wg sync.WaitGroup
	p := dir
	for i, name := range names {
		p = path.Join(p, name)
		wg.Add(1)
		go func(i int, p string) {
			defer wg.Done()
			out[i].fi, out[i].err = sc.Lstat(p)
		}(i, p)
	}
	wg.Wait()
	return out
}

// components splits p at slashes, leaving out empty names.
func components(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
