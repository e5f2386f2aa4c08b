package become

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/autoshell/agent/transport"
)

// Exit statuses of the file scripts.
const (
	exitNoEnt   = 3
	exitPerm    = 4
	exitIsDir   = 5
	exitOwner   = 6
	exitSELinux = 7
	exitSpecial = 8
)

// readScript never opens a fifo, socket or device (exit 8): a fifo's open
// waits for a writer for ever, a device's may never end.
const readScript = `f=$1; if [ ! -e "$f" ]; then exit 3; fi; if [ -d "$f" ]; then exit 5; fi; ` +
	`if [ -p "$f" ] || [ -S "$f" ] || [ -b "$f" ] || [ -c "$f" ]; then exit 8; fi; ` +
	`if [ ! -r "$f" ]; then exit 4; fi; exec cat -- "$f"`

const statScript = `f=$1; if [ ! -e "$f" ]; then exit 3; fi; exec stat -L -c '%s %f %Y' -- "$f"`

const realPathScript = `readlink -f -- "$1" || exit 3`

// installScript puts the file $1 (the login user's temporary copy) at $2
// as the become user: through a symbolic link at $2 to where it leads,
// via a temporary file in the same directory renamed over $2 only when
// complete, keeping an existing file's owner, group, mode (setuid and
// setgid bits included) and SELinux context; a new file gets mode $3 (and
// the default SELinux context of its place).
const installScript = `src=$1; dst=$2; perm=$3; ` +
	`if [ -L "$dst" ]; then r=$(readlink -f -- "$dst") && [ -n "$r" ] && dst=$r; fi; ` +
	`if [ -d "$dst" ]; then exit 5; fi; ` +
	`dir=${dst%/*}; [ -n "$dir" ] || dir=/; ` +
	`if [ ! -d "$dir" ]; then exit 3; fi; ` +
	`tmp=$(mktemp -- "$dir/.agent-tmp.XXXXXXXX") || exit 4; ` +
	`trap 'rm -f -- "$tmp"' EXIT; ` +
	`cat -- "$src" > "$tmp" || exit 1; ` +
	`se=; if command -v selinuxenabled >/dev/null 2>&1 && selinuxenabled; then se=1; fi; ` +
	`if [ -e "$dst" ]; then ` +
	`own=$(stat -L -c %u:%g -- "$dst") && mode=$(stat -L -c %a -- "$dst") || exit 1; ` +
	`if [ "$(stat -c %u:%g -- "$tmp")" != "$own" ]; then chown -- "$own" "$tmp" || exit 6; fi; ` +
	`chmod -- "$mode" "$tmp" || exit 1; ` +
	`if [ -n "$se" ]; then chcon --reference="$dst" -- "$tmp" || exit 7; fi; ` +
	`else chmod -- "$perm" "$tmp" || exit 1; fi; ` +
	`sync -- "$tmp" 2>/dev/null; ` +
	`mv -f -- "$tmp" "$dst" || exit 1; trap - EXIT; ` +
	`if [ -n "$se" ] && [ -z "$own" ] && command -v restorecon >/dev/null 2>&1; then restorecon -- "$dst"; fi; true`

// resolve makes p absolute for the become user: "~" is its home, and a
// relative path is relative to that home on SSH hosts (the transport
// contract); locally a relative path is left to the working directory.
func (t *Transport) resolve(ctx context.Context, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsAny(p, "\x00") {
		return "", errors.New("path contains a NUL byte")
	}
	if p == "~" || strings.HasPrefix(p, "~/") || (!path.IsAbs(p) && t.inner.Host().Kind != "local") {
		home, err := t.HomeDir(ctx)
		if err != nil {
			return "", err
		}
		return transport.ExpandHome(p, home), nil
	}
	return p, nil
}

// script runs a file script as the become user with args.
func (t *Transport) script(ctx context.Context, s string, stdout io.Writer, args ...string) (transport.Result, error) {
	var b strings.Builder
	b.WriteString("set --")
	for _, a := range args {
		b.WriteString(" " + quote(a))
	}
	b.WriteString("; " + s)
	return t.Run(ctx, transport.Command{Command: b.String(), Stdout: stdout, CaptureLimit: captureFor(stdout)})
}

// captureFor keeps little of a stream that goes to a writer anyway.
func captureFor(w io.Writer) int {
	if w != nil {
		return 1 << 10
	}
	return 0
}

// fileError turns a file script's exit status into an error for op on p.
func fileError(op, p string, res transport.Result) error {
	var err error
	switch res.ExitCode {
	case exitNoEnt:
		err = fs.ErrNotExist
	case exitPerm:
		err = fs.ErrPermission
	case exitIsDir:
		err = syscall.EISDIR
	case exitOwner:
		err = errors.New("cannot give the new content the file's owner and group")
	case exitSELinux:
		err = errors.New("cannot give the new content the file's SELinux context")
	case exitSpecial:
		err = errors.New("not a regular file (a fifo, socket or device): not read")
	default:
		msg := oneLine(res.Stderr, 300)
		if msg == "" {
			msg = "no message"
		}
		err = fmt.Errorf("exit %d: %s", res.ExitCode, msg)
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// countWriter counts what passes to w.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadFile streams the file at p into w, read by the become user with cat.
func (t *Transport) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	abs, err := t.resolve(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	cw := &countWriter{w: w}
	res, err := t.script(ctx, readScript, cw, abs)
	if err != nil {
		return cw.n, fmt.Errorf("read %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return cw.n, fileError("read", p, res)
	}
	return cw.n, nil
}

// Stat describes the file at p as the become user sees it (stat -L).
func (t *Transport) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	abs, err := t.resolve(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	res, err := t.script(ctx, statScript, nil, abs)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return nil, fileError("stat", p, res)
	}
	fi, err := parseStat(path.Base(abs), res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	return fi, nil
}

// RealPath is where p really is for the become user, every symbolic link
// followed (readlink -f).
func (t *Transport) RealPath(ctx context.Context, p string) (string, error) {
	abs, err := t.resolve(ctx, p)
	if err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	res, err := t.script(ctx, realPathScript, nil, abs)
	if err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return "", fileError("realpath", p, res)
	}
	return strings.TrimSuffix(res.Stdout, "\n"), nil
}

// WriteFile replaces the file at p with r's content as the become user:
// the content goes over the login user's transport (SFTP) to a private
// temporary directory, then the become user installs it (installScript):
// atomically, keeping an existing file's owner, group, mode and SELinux
// context; a new file gets perm (0644 when zero) and belongs to the
// become user. A become user other than root is given read access to the
// temporary copy with setfacl, as Ansible does; without setfacl that is
// an error. It returns the bytes written.
func (t *Transport) WriteFile(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("write %s: %w", p, err) }
	abs, err := t.resolve(ctx, p)
	if err != nil {
		return fail(err)
	}
	if perm == 0 {
		perm = 0o644
	}
	res, err := t.inner.Run(ctx, transport.Command{Command: `mktemp -d "${TMPDIR:-/tmp}/agent-become.XXXXXXXX"`})
	if err != nil {
		return fail(fmt.Errorf("temporary directory: %w", err))
	}
	dir := strings.TrimSuffix(res.Stdout, "\n")
	if res.ExitCode != 0 || !path.IsAbs(dir) || strings.ContainsAny(dir, "\n\x00") {
		return fail(fmt.Errorf("temporary directory: mktemp exited %d: %s", res.ExitCode, oneLine(res.Stderr, 200)))
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		t.inner.Run(cctx, transport.Command{Command: "rm -rf -- " + quote(dir)})
	}()
	src := dir + "/content"
	n, err := t.inner.WriteFile(ctx, src, r, 0o600)
	if err != nil {
		return fail(err)
	}
	if !t.root() {
		acl := fmt.Sprintf("setfacl -m u:%s:x %s && setfacl -m u:%s:r %s", quote(t.cfg.User), quote(dir), quote(t.cfg.User), quote(src))
		res, err := t.inner.Run(ctx, transport.Command{Command: acl})
		if err != nil {
			return fail(err)
		}
		if res.ExitCode != 0 {
			return fail(fmt.Errorf("giving %s read access to the temporary copy needs setfacl (the acl package) on the host: %s",
				t.cfg.User, oneLine(res.Stderr, 200)))
		}
	}
	res, err = t.script(ctx, installScript, nil, src, abs, fmt.Sprintf("%04o", unixPerm(perm)))
	if err != nil {
		return fail(err)
	}
	if res.ExitCode != 0 {
		return 0, fileError("write", p, res)
	}
	return n, nil
}

// root reports whether the become user is root.
func (t *Transport) root() bool { return t.cfg.User == "root" || t.cfg.User == "#0" }

// unixPerm is m's permission, setuid, setgid and sticky bits as Unix bits.
func unixPerm(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// parseStat reads `stat -c '%s %f %Y'`: size, raw st_mode in hex, mtime.
func parseStat(name, out string) (fs.FileInfo, error) {
	f := strings.Fields(out)
	if len(f) != 3 {
		return nil, fmt.Errorf("unexpected stat output %q", oneLine(out, 100))
	}
	size, err1 := strconv.ParseInt(f[0], 10, 64)
	raw, err2 := strconv.ParseUint(f[1], 16, 32)
	mtime, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || size < 0 {
		return nil, fmt.Errorf("unexpected stat output %q", oneLine(out, 100))
	}
	return &fileInfo{name: name, size: size, mode: modeOf(uint32(raw)), mtime: time.Unix(mtime, 0)}, nil
}

// modeOf converts a Unix st_mode to an fs.FileMode.
func modeOf(raw uint32) fs.FileMode {
	m := fs.FileMode(raw & 0o777)
	switch raw & 0o170000 {
	case 0o040000:
		m |= fs.ModeDir
	case 0o120000:
		m |= fs.ModeSymlink
	case 0o010000:
		m |= fs.ModeNamedPipe
	case 0o140000:
		m |= fs.ModeSocket
	case 0o020000:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		m |= fs.ModeDevice
	}
	if raw&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if raw&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if raw&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

type fileInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.size }
func (f *fileInfo) Mode() fs.FileMode  { return f.mode }
func (f *fileInfo) ModTime() time.Time { return f.mtime }
func (f *fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f *fileInfo) Sys() any           { return nil }
