package ssh

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/sftp"

	"github.com/autoshell/agent/transport"
)

// Files without SFTP (docs/decisions.md, "File tools without SFTP"): where
// the host has no SFTP server (most Dropbear hosts, OpenSSH with the
// subsystem off) or one that cannot be used (a login shell that prints
// before the external sftp-server starts), the file methods go through the
// shell: POSIX commands (cat, stat -c, readlink, sha256sum, mv) on the
// worker or a session, the content on the command's standard output or
// input. Every transfer is checked by its size and SHA-256 on both sides;
// a write goes to a temporary file in the same directory, is checked,
// given the old file's mode and owner (or perm), synced and renamed over
// the file, as over SFTP. The choice is made per host, at its first file
// method, and said once (Options.Warn).

// The ways a Transport moves files (Transport.fileVia).
const (
	filesUndecided int32 = iota
	filesSFTP
	filesShell
)

// viaShell reports whether t's file methods go through the shell: at the
// first call SFTP is started, and when it cannot be (the connection
// itself fine) the shell is used from then on, said once.
func (t *Transport) viaShell(ctx context.Context) bool {
	switch t.fileVia.Load() {
	case filesSFTP:
		return false
	case filesShell:
		return true
	}
	if t.opts.ShellFiles {
		t.fileVia.Store(filesShell)
		return true
	}
	_, _, _, err := t.files(ctx)
	switch {
	case err == nil:
		t.fileVia.CompareAndSwap(filesUndecided, filesSFTP)
		return false
	case ctx.Err() != nil || errors.Is(err, transport.ErrConnection) || errors.Is(err, transport.ErrClosed) || errors.Is(err, errConnLost):
		return false // the SFTP path reports it; decided at a later call
	}
	if t.fileVia.CompareAndSwap(filesUndecided, filesShell) {
		t.opts.Warn(fmt.Sprintf("%s: %s; files go through the shell instead (checked by size and SHA-256)", t.Host().Name, sftpUnusable(err)))
	}
	return true
}

// sftpUnusable says why SFTP could not be used: a login shell that printed
// before the SFTP server started is named with OpenSSH's own advice.
func sftpUnusable(err error) string {
	if s := err.Error(); strings.Contains(s, "packet too long") || strings.Contains(s, "message too long") {
		return fmt.Sprintf("the SFTP server's first answer was not SFTP (%v): the login shell prints something when it starts. "+
			"OpenSSH's sftp says \"Received message too long …\" and \"Ensure the remote shell produces no output for non-interactive sessions.\": "+
			"make the shell's startup files (~/.bashrc …) silent when not interactive ([ -t 0 ] || return, or case $- in *i*) …)", err)
	}
	return fmt.Sprintf("no usable SFTP server (%v)", err)
}

// shellPrelude starts every script: messages in English (the errors are
// read by their text), files created private until their mode is set.
const shellPrelude = "LC_ALL=C; export LC_ALL; umask 077\n"

// statFormat is what stat -c prints of a file, in GNU and BusyBox stat
// alike: the raw mode in hex, size, mtime, owner, group.
const statFormat = "%f %s %Y %u %g"

// shellRun runs script on the host and returns its result, its stdout
// from the script's own first line on; a non-zero exit is an error made
// of what the script printed on stderr.
func (t *Transport) shellRun(ctx context.Context, op, p string, cmd transport.Command) (transport.Result, error) {
	// A nonce line first: what a login shell printed before the command
	// (a session of its own) is dropped with it.
	nonce := randomHex(8)
	cmd.Command = shellPrelude + "echo " + nonce + "\n" + cmd.Command
	res, err := t.Run(ctx, cmd)
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", op, p, err)
	}
	if i := strings.Index(res.Stdout, nonce+"\n"); i >= 0 {
		res.Stdout = res.Stdout[i+len(nonce)+1:]
	}
	if res.ExitCode != 0 {
		return res, shellErr(op, p, res.Stderr)
	}
	return res, nil
}

// specialText is what the read script says of a fifo, socket or device
// it does not open.
const specialText = "agent: a fifo, socket or device, not opened"

// shellErr turns a shell command's complaint into the transport's error:
// fs.ErrNotExist, fs.ErrPermission, ENOTDIR, EISDIR kept.
func shellErr(op, p, stderr string) error {
	msg := strings.TrimSpace(stderr)
	for _, e := range []struct {
		text string
		err  error
	}{
		{"No such file", fs.ErrNotExist},
		{"Directory nonexistent", fs.ErrNotExist}, // dash
		{"Permission denied", fs.ErrPermission},
		{"Operation not permitted", fs.ErrPermission},
		{"Read-only file system", syscall.EROFS},
		{"Not a directory", syscall.ENOTDIR},
		{"Is a directory", syscall.EISDIR},
		{specialText, transport.ErrSpecialFile},
		{"No space left", syscall.ENOSPC},
	} {
		if strings.Contains(msg, e.text) {
			return &fs.PathError{Op: op, Path: p, Err: e.err}
		}
	}
	if msg == "" {
		msg = "failed"
	}
	return &fs.PathError{Op: op, Path: p, Err: errors.New(msg)}
}

// shellPath is p made absolute as the file methods take it.
func (t *Transport) shellPath(ctx context.Context, p string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p), nil
	}
	home, err := t.HomeDir(ctx)
	if err != nil {
		return "", err
	}
	return t.expandHome(p, func() string { return home }), nil
}

// shellStat is Stat (follow) or Lstat through the shell.
func (t *Transport) shellStat(ctx context.Context, p string, follow bool) (fs.FileInfo, error) {
	op, flag := "stat", "-L "
	if !follow {
		op, flag = "lstat", ""
	}
	ap, err := t.shellPath(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, p, err)
	}
	res, err := t.shellRun(ctx, op, ap, transport.Command{Command: "stat " + flag + "-c '" + statFormat + "' -- " + shellQuote(ap)})
	if err != nil {
		return nil, err
	}
	fi, err := parseStat(path.Base(ap), strings.TrimSuffix(res.Stdout, "\n"))
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: ap, Err: err}
	}
	return fi, nil
}

// shellReadLink is readlink(1) of p.
func (t *Transport) shellReadLink(ctx context.Context, p string) (string, error) {
	res, err := t.shellRun(ctx, "readlink", p, transport.Command{Command: "readlink -- " + shellQuote(p)})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(res.Stdout, "\n"), nil
}

// shellReadDir lists the entries of directory p, links not followed:
// "STAT NAME\0" an entry.
func (t *Transport) shellReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	ap, err := t.shellPath(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", p, err)
	}
	res, err := t.shellRun(ctx, "read directory", ap, transport.Command{CaptureLimit: 64 << 20, Command: "d=" + shellQuote(ap) + `
if [ ! -e "$d" ]; then echo "$d: No such file or directory" >&2; exit 1; fi
if [ ! -d "$d" ]; then echo "$d: Not a directory" >&2; exit 1; fi
cd -- "$d" || exit 1
for f in .* *; do
	case $f in . | ..) continue ;; esac
	if [ -e "$f" ] || [ -L "$f" ]; then s=$(stat -c '` + statFormat + `' -- "$f") && printf '%s %s\0' "$s" "$f"; fi
done`})
	if err != nil {
		return nil, err
	}
	return parseDirListing(res.Stdout)
}

// parseDirListing parses shellReadDir's output.
func parseDirListing(out string) ([]fs.FileInfo, error) {
	var fis []fs.FileInfo
	if out == "" {
		return nil, nil
	}
	if !strings.HasSuffix(out, "\x00") {
		return nil, errors.New("directory listing: truncated")
	}
	for _, rec := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		f := strings.SplitN(rec, " ", 6)
		if len(f) != 6 || f[5] == "" || strings.Contains(f[5], "/") {
			return nil, fmt.Errorf("directory listing: bad entry %q", rec)
		}
		fi, err := parseStat(f[5], strings.Join(f[:5], " "))
		if err != nil {
			return nil, fmt.Errorf("directory listing: %w", err)
		}
		fis = append(fis, fi)
	}
	return fis, nil
}

// parseStat reads statFormat's fields into a FileInfo named name, whose
// Sys is an *sftp.FileStat as over SFTP.
func parseStat(name, line string) (fs.FileInfo, error) {
	f := strings.Fields(line)
	if len(f) != 5 {
		return nil, fmt.Errorf("stat: %q is not %q", line, statFormat)
	}
	raw, err1 := strconv.ParseUint(f[0], 16, 32)
	size, err2 := strconv.ParseInt(f[1], 10, 64)
	mtime, err3 := strconv.ParseInt(f[2], 10, 64)
	uid, err4 := strconv.ParseUint(f[3], 10, 32)
	gid, err5 := strconv.ParseUint(f[4], 10, 32)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil || size < 0 {
		return nil, fmt.Errorf("stat: bad fields %q", line)
	}
	st := &sftp.FileStat{Size: uint64(size), Mode: uint32(raw), Mtime: uint32(mtime), UID: uint32(uid), GID: uint32(gid)}
	return &shellFileInfo{name: name, size: size, mode: unixMode(uint32(raw)), mtime: time.Unix(mtime, 0), sys: st}, nil
}

// unixMode is st_mode as an fs.FileMode.
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

type shellFileInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	sys   *sftp.FileStat
}

func (f *shellFileInfo) Name() string       { return f.name }
func (f *shellFileInfo) Size() int64        { return f.size }
func (f *shellFileInfo) Mode() fs.FileMode  { return f.mode }
func (f *shellFileInfo) ModTime() time.Time { return f.mtime }
func (f *shellFileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f *shellFileInfo) Sys() any           { return f.sys }

// shellLinks is realPath's linkReader through the shell.
type shellLinks struct {
	ctx context.Context
	t   *Transport
}

func (l shellLinks) Lstat(p string) (fs.FileInfo, error) { return l.t.shellStat(l.ctx, p, false) }
func (l shellLinks) ReadLink(p string) (string, error)   { return l.t.shellReadLink(l.ctx, p) }

// shellRealPath is RealPath through the shell: the same resolution, each
// lookup a command.
func (t *Transport) shellRealPath(ctx context.Context, p string) (string, error) {
	ap, err := t.shellPath(ctx, p)
	if err != nil {
		return "", fmt.Errorf("realpath %s: %w", p, err)
	}
	if strings.HasPrefix(p, "/") {
		ap = p // as given: realPath applies ".." after links
	}
	return realPath(shellLinks{ctx, t}, ap)
}

// shellInspect is Inspect through the shell: RealPath, then a stat of
// the real path, then the content when asked for.
func (t *Transport) shellInspect(ctx context.Context, p string, readMax int64) (transport.Inspection, error) {
	var in transport.Inspection
	real, err := t.shellRealPath(ctx, p)
	if err != nil {
		return in, err
	}
	in.Real = real
	fi, err := t.shellStat(ctx, real, true)
	if errors.Is(err, fs.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return in, err
	}
	in.Info = fi
	if st, ok := fi.Sys().(*sftp.FileStat); ok {
		in.UID, in.GID, in.Owned = int(st.UID), int(st.GID), true
	}
	if readMax > 0 && fi.Mode().IsRegular() && fi.Size() <= readMax {
		var b bytes.Buffer
		if _, err := t.shellReadFile(ctx, real, &limited{w: &b, n: readMax}); err == nil {
			in.Content, in.Read = b.Bytes(), true
		} else if ctx.Err() != nil {
			return in, fmt.Errorf("inspect %s: %w", p, ctx.Err())
		}
	}
	return in, nil
}

// errSumMismatch is a transfer whose size or SHA-256 differed on the two
// sides, twice.
var errSumMismatch = errors.New("the bytes that arrived are not the bytes sent (size or SHA-256 differ), twice; nothing was written")

// shellReadFile streams the file at p into w, after its size and SHA-256
// were checked against the host's: the content is held (in memory, or a
// temporary file past spoolMemory) until then, so w never gets bytes
// that do not check out. A mismatch is read again once.
func (t *Transport) shellReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	ap, err := t.shellPath(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	for attempt := 0; ; attempt++ {
		sp := &spool{}
		h := sha256.New()
		nonce := randomHex(16)
		// The nonce line first: whatever a login shell printed before the
		// command is dropped with it.
		body := &afterMarker{marker: []byte(nonce + "\n"), w: io.MultiWriter(sp, h)}
		res, err := t.shellRun(ctx, "read", ap, transport.Command{CaptureLimit: 4 << 10, Stdout: body, Command: "f=" + shellQuote(ap) + `
if [ -d "$f" ]; then echo "$f: Is a directory" >&2; exit 1; fi
if [ -p "$f" ] || [ -S "$f" ] || [ -b "$f" ] || [ -c "$f" ]; then echo "$f: ` + specialText + `" >&2; exit 1; fi
exec 3< "$f" || exit 1
echo ` + nonce + `
cat <&3 || exit 1
x=$(sha256sum < "$f") && echo "agent-sum $(wc -c < "$f") ${x%% *}" >&2`})
		if err != nil {
			sp.close()
			return 0, err
		}
		got := hex.EncodeToString(h.Sum(nil))
		want := sumLine(res.Stderr)
		if want == fmt.Sprintf("%d %s", sp.n, got) {
			n, err := sp.copyTo(w)
			sp.close()
			if err != nil {
				return n, fmt.Errorf("read %s: %w", ap, err)
			}
			return n, nil
		}
		sp.close()
		if attempt == 1 {
			return 0, fmt.Errorf("read %s: %w (received %d bytes, SHA-256 %s; the host has %q)", ap, errSumMismatch, sp.n, got, want)
		}
	}
}

// sumLine is the "SIZE SHA256" a script printed on stderr after
// "agent-sum ".
func sumLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "agent-sum "); ok {
			f := strings.Fields(rest)
			if len(f) == 2 {
				return f[0] + " " + f[1]
			}
		}
	}
	return ""
}

// shellWriteFile replaces the file at p with r's content through the
// shell, as WriteFile does over SFTP: the content (held in memory, or a
// temporary file past spoolMemory, to know its size and SHA-256 first)
// goes on the command's standard input to a new temporary file beside the
// target (links at p followed), which the host checks by size and
// SHA-256 — a mismatch removes it, and is sent once more — then gives the
// old file's owner and mode (or perm), syncs and renames over the target.
func (t *Transport) shellWriteFile(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	ap, err := t.shellPath(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", p, err)
	}
	if perm == 0 {
		perm = 0o644
	}
	sp := &spool{}
	defer sp.close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(sp, h), r); err != nil {
		return 0, &fs.PathError{Op: "write", Path: ap, Err: err}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	mode := perm & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	for attempt := 0; attempt < 2; attempt++ {
		in, err := sp.reader()
		if err != nil {
			return 0, fmt.Errorf("write %s: %w", ap, err)
		}
		res, err := t.shellRun(ctx, "write", ap, transport.Command{Stdin: in, Command: "p=" + shellQuote(ap) + " n=" + strconv.FormatInt(sp.n, 10) +
			" h=" + sum + " m=" + strconv.FormatUint(uint64(unixPerm(mode)), 8) + " r=" + randomHex(6) + `
if [ -L "$p" ]; then p=$(readlink -f -- "$p") || exit 1; fi
if [ -d "$p" ]; then echo "$p: Is a directory" >&2; exit 1; fi
b=${p##*/} d=${p%/*}
t=${d:-/}/.$(printf '%.200s' "$b").agent-$r
(set -C; exec cat > "$t") || { rm -f -- "$t"; exit 1; }
s=$(wc -c < "$t") && x=$(sha256sum < "$t") || { rm -f -- "$t"; exit 1; }
if [ "$s" -ne "$n" ] || [ "${x%% *}" != "$h" ]; then rm -f -- "$t"; echo "agent-mismatch $s ${x%% *}"; exit 0; fi
if [ -e "$p" ]; then
	o=$(stat -c '%u:%g %a' -- "$p") || { rm -f -- "$t"; exit 1; }
	[ "$(stat -c '%u:%g' -- "$t")" = "${o% *}" ] || chown -- "${o% *}" "$t" 2>/dev/null
	m=${o#* }
fi
chmod -- "$m" "$t" || { rm -f -- "$t"; exit 1; }
sync -- "$t" 2>/dev/null
mv -f -- "$t" "$p" || { rm -f -- "$t"; exit 1; }
echo agent-written`})
		if err != nil {
			return 0, err
		}
		switch last := lastLine(res.Stdout); {
		case last == "agent-written":
			return sp.n, nil
		case strings.HasPrefix(last, "agent-mismatch "):
			if attempt == 1 {
				return 0, fmt.Errorf("write %s: %w (sent %d bytes, SHA-256 %s; the host got %s)", ap, errSumMismatch, sp.n, sum, strings.TrimPrefix(last, "agent-mismatch "))
			}
		default:
			return 0, fmt.Errorf("write %s: the host did not say the file was written: %q", ap, strings.TrimSpace(res.Stdout+res.Stderr))
		}
	}
	panic("unreachable")
}

// unixPerm is mode's permission and special bits as chmod takes them.
func unixPerm(mode fs.FileMode) uint32 {
	m := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		m |= syscall.S_ISUID
	}
	if mode&fs.ModeSetgid != 0 {
		m |= syscall.S_ISGID
	}
	if mode&fs.ModeSticky != 0 {
		m |= syscall.S_ISVTX
	}
	return m
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// afterMarker passes to w what follows the first marker: a login shell's
// noise before the command's own output is dropped.
type afterMarker struct {
	marker []byte
	w      io.Writer
	head   []byte
	found  bool
}

func (a *afterMarker) Write(p []byte) (int, error) {
	if a.found {
		return a.w.Write(p)
	}
	a.head = append(a.head, p...)
	i := bytes.Index(a.head, a.marker)
	if i < 0 {
		if len(a.head) > maxPreamble {
			return 0, errors.New("no start marker in the command's output")
		}
		return len(p), nil
	}
	a.found = true
	rest := a.head[i+len(a.marker):]
	a.head = nil
	if _, err := a.w.Write(rest); err != nil {
		return 0, err
	}
	return len(p), nil
}

// spoolMemory is how much of a transfer a spool holds in memory before it
// moves to a temporary file.
const spoolMemory = 8 << 20

// spool holds a transfer's bytes: in memory up to spoolMemory, then in a
// temporary file (removed by close).
type spool struct {
	buf  bytes.Buffer
	file *os.File
	n    int64
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.n += int64(len(p))
	if s.file == nil && s.buf.Len()+len(p) <= spoolMemory {
		return s.buf.Write(p)
	}
	if s.file == nil {
		if s.file, s.err = os.CreateTemp("", "agent-transfer-*"); s.err != nil {
			return 0, s.err
		}
		os.Remove(s.file.Name()) // unnamed: gone with the descriptor
		if _, s.err = s.file.Write(s.buf.Bytes()); s.err != nil {
			return 0, s.err
		}
		s.buf = bytes.Buffer{}
	}
	_, s.err = s.file.Write(p)
	return len(p), s.err
}

// reader reads the spool from its start.
func (s *spool) reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.buf.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.LimitReader(s.file, s.n), nil
}

func (s *spool) copyTo(w io.Writer) (int64, error) {
	r, err := s.reader()
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, r)
	if err != nil {
		err = &callerError{err}
	}
	return n, err
}

func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
}
