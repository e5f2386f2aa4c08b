package become

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// exitNotDir: ReadDir's path is not a directory.
const exitNotDir = 8

// readDirScript lists $1's entries as the become user, one record per
// entry ended by NUL (a name may hold a newline): size, st_mode in hex,
// mtime, name — stat without -L, so a link is a link.
const readDirScript = `d=$1; if [ ! -e "$d" ]; then exit 3; fi; if [ ! -d "$d" ]; then exit 8; fi; ` +
	`cd -- "$d" 2>/dev/null || exit 4; [ -r . ] || exit 4; ` +
	`for f in * .[!.]* ..?*; do if [ -e "$f" ] || [ -L "$f" ]; then stat --printf '%s %f %Y %n\0' -- "$f" || exit 1; fi; done`

// ReadDir describes the entries of the directory at p as the become user
// sees them, links not followed (transport.DirReader).
func (t *Transport) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	abs, err := t.resolve(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", p, err)
	}
	var out bytes.Buffer
	res, err := t.script(ctx, readDirScript, &out, abs)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", p, err)
	}
	if res.ExitCode == exitNotDir {
		return nil, &fs.PathError{Op: "read directory", Path: p, Err: syscall.ENOTDIR}
	}
	if res.ExitCode != 0 {
		return nil, fileError("read directory", p, res)
	}
	var fis []fs.FileInfo
	for _, rec := range strings.Split(strings.TrimSuffix(out.String(), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, " ", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("read directory %s: unexpected stat output %q", p, oneLine(rec, 100))
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		raw, err2 := strconv.ParseUint(f[1], 16, 32)
		mtime, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || size < 0 {
			return nil, fmt.Errorf("read directory %s: unexpected stat output %q", p, oneLine(rec, 100))
		}
		fis = append(fis, &fileInfo{name: path.Base(f[3]), size: size, mode: modeOf(uint32(raw)), mtime: time.Unix(mtime, 0)})
	}
	return fis, nil
}
