package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/transport"
)

// sftpOptions tune pkg/sftp for throughput: concurrent reads and writes,
// 64 requests in flight per file, 32 KiB packets (the size every server
// must accept); bigPacket where the server says it takes more.
var sftpOptions = []sftp.ClientOption{
	sftp.UseConcurrentReads(true),
	sftp.UseConcurrentWrites(true),
	sftp.MaxConcurrentRequestsPerFile(64),
	sftp.MaxPacketChecked(32 << 10),
	sftp.UseFstat(true),
}

// bigPacket is the payload size used with servers that advertise
// limits@openssh.com: half of their 256 KiB message limit.
const bigPacket = 128 << 10

// sftpClient returns c's SFTP client and the remote home directory,
// starting the SFTP subsystem on first use (or after it died). The home
// is asked for beside the caller's first request, not before it (a round
// trip less): home waits for the answer, "" when there is none (a
// relative path is then left to the server, which starts there).
func (c *conn) sftpClient(ctx context.Context) (*sftp.Client, func() string, error) {
	if err := acquire(ctx, c.sftpOpen); err != nil {
		return nil, nil, err
	}
	defer func() { <-c.sftpOpen }()
	c.mu.Lock()
	sc, home, ended := c.sftp, c.home, c.ended
	c.mu.Unlock()
	if ended {
		return nil, nil, errConnLost
	}
	if sc != nil {
		return sc, home, nil
	}
	type res struct {
		sc   *sftp.Client
		home func() string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		sc, err := newSFTPClient(c.client)
		for deadline := time.Now().Add(openRetryFor); isOpenRejected(err) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond) // see openSession
			sc, err = newSFTPClient(c.client)
		}
		if err != nil {
			ch <- res{err: fmt.Errorf("start sftp: %w", err)}
			return
		}
		var home string
		asked := make(chan struct{})
		go func() {
			defer close(asked)
			home, _ = sc.Getwd() // realpath ".": where sftp-server starts, the home directory
		}()
		ch <- res{sc, func() string { <-asked; return home }, nil}
	}()
	var r res
	select {
	case r = <-ch:
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.sc != nil {
				r.sc.Close()
			}
		}()
		return nil, nil, ctx.Err()
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		r.sc.Close()
		return nil, nil, errConnLost
	}
	c.sftp, c.home = r.sc, r.home
	c.mu.Unlock()
	go func() { // the subsystem may die alone: forget it, the next call reopens it
		r.sc.Wait()
		c.mu.Lock()
		if c.sftp == r.sc {
			c.sftp = nil
		}
		c.mu.Unlock()
	}()
	return r.sc, r.home, nil
}

// files returns an SFTP client, dialling once more when the connection
// turns out to be gone (nothing has been done yet, so that is safe).
func (t *Transport) files(ctx context.Context) (*conn, *sftp.Client, func() string, error) {
	var sc *sftp.Client
	var home func() string
	ungate, err := t.gate(ctx) // the subsystem's start is a session's
	if err != nil {
		return nil, nil, nil, err
	}
	defer ungate()
	c, err := t.retry(ctx, func(c *conn) error {
		var err error
		sc, home, err = c.sftpClient(ctx)
		return err
	})
	return c, sc, home, err
}

// Stat describes the file at path, following symbolic links.
func (t *Transport) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	if t.viaShell(ctx) {
		return t.shellStat(ctx, p, true)
	}
	c, sc, home, err := t.files(ctx)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	p = t.expandHome(p, home)
	fi, err := call(ctx, func() (fs.FileInfo, error) { return sc.Stat(p) })
	if err != nil {
		return nil, t.fileErr(c, sc, "stat", p, err)
	}
	return fi, nil
}

// ReadFile streams the file at path into w with pkg/sftp's concurrent
// File.WriteTo (w is not wrapped in a bufio.Writer, which would defeat it:
// pkg/sftp#125, #587).
func (t *Transport) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	if t.viaShell(ctx) {
		return t.shellReadFile(ctx, p, w)
	}
	c, sc, home, err := t.files(ctx)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	p = t.expandHome(p, home)
	gw := &gatedWriter{w: w}
	done := make(chan error, 1)
	go func() { done <- readFile(sc, p, gw) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		gw.close() // after this, nothing more reaches w
		err = ctx.Err()
	}
	if err != nil {
		return gw.count(), t.fileErr(c, sc, "read", p, err)
	}
	return gw.count(), nil
}

func readFile(sc *sftp.Client, p string, w io.Writer) error {
	f, err := sc.Open(p)
	if err != nil {
		return err
	}
	// Closed without waiting for the answer: the server handles its
	// requests in order, so nothing later sees the handle open, and a
	// small file costs the open and one read (two round trips, with the
	// read that finds its end) instead of five.
	defer func() { go f.Close() }()
	// Its fstat and the first read go out at once.
	var fi fs.FileInfo
	var statErr error
	stated := make(chan struct{})
	go func() {
		defer close(stated)
		fi, statErr = f.Stat()
	}()
	buf := make([]byte, firstRead)
	n, rerr := f.ReadAt(buf, 0)
	<-stated
	switch {
	case statErr != nil:
		return statErr
	case fi.IsDir():
		return syscall.EISDIR
	case rerr != nil && !errors.Is(rerr, io.EOF):
		return rerr
	}
	if _, err := w.Write(buf[:n]); err != nil || rerr != nil {
		return err // all of it read (EOF), or w failed
	}
	// A larger file: the rest with pkg/sftp's concurrent reads.
	if _, err := f.Seek(int64(n), io.SeekStart); err != nil {
		return err
	}
	_, err = f.WriteTo(w)
	return err
}

// firstRead is what readFile asks for with the file's fstat: one SFTP
// packet's worth (pkg/sftp's default), so that a small file is one read.
const firstRead = 32 << 10

// WriteFile replaces the file at path atomically: a temporary file
// ".NAME.agent-RANDOM" in the same directory (created exclusively, mode
// 0600), written with concurrent requests, fsynced when it replaces a file
// (fsync@openssh.com, when the server has it), given the old file's mode (and owner, where allowed)
// or perm, then renamed over path with posix-rename@openssh.com. A symbolic
// link at path is followed: its target is replaced and the link kept. Any
// failure or cancellation before the rename removes the temporary file and
// leaves the old file untouched.
func (t *Transport) WriteFile(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	if t.viaShell(ctx) {
		return t.shellWriteFile(ctx, p, r, perm)
	}
	c, sc, home, err := t.files(ctx)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", p, err)
	}
	p = t.expandHome(p, home)
	if perm == 0 {
		perm = 0o644
	}
	w := &atomicWrite{c: c, sc: sc, r: &gatedReader{r: r}, perm: perm, warn: t.opts.Warn}
	done := make(chan error, 1)
	go func() { done <- w.run(p) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		w.r.close()
		if w.state.CompareAndSwap(writing, abandoned) {
			err = ctx.Err() // the rename will not happen; w cleans up
		} else {
			err = <-done // the rename was already under way: report its outcome
		}
	}
	if err != nil {
		return 0, t.fileErr(c, sc, "write", p, err)
	}
	return w.n, nil
}

const (
	writing int32 = iota
	renaming
	abandoned
)

type atomicWrite struct {
	c     *conn
	sc    *sftp.Client
	r     *gatedReader
	perm  fs.FileMode
	warn  func(string)
	state atomic.Int32
	n     int64
}

func (w *atomicWrite) run(p string) (err error) {
	target, old, err := resolveLinks(w.sc, p)
	if err != nil {
		return err
	}
	mode := w.perm
	if old != nil {
		if old.IsDir() {
			return syscall.EISDIR
		}
		mode = old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	dir, name := path.Split(target)
	if len(name) > 200 {
		name = name[:200]
	}
	tmp := path.Join(dir, "."+name+".agent-"+randomHex(6))
	f, err := w.sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			w.sc.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if w.n, err = f.ReadFromWithConcurrency(w.r, 0); err != nil {
		return err
	}
	if old != nil {
		// Replacing a file: its old content must survive a crash until
		// the new one is on disk. A new name loses nothing (scp and
		// rsync do not sync either), and the sync of a large upload
		// costs as much as sending it.
		if err = f.Sync(); err != nil {
			if !isUnsupported(err) {
				return err
			}
			err = nil
			w.c.warnNoFsync(w.warn)
		}
		keepOwner(f, old)
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if !w.state.CompareAndSwap(writing, renaming) {
		return context.Canceled
	}
	if _, ok := w.sc.HasExtension("posix-rename@openssh.com"); ok {
		return w.sc.PosixRename(tmp, target)
	}
	if old != nil {
		return fmt.Errorf("the SFTP server lacks posix-rename@openssh.com: cannot replace %s atomically", target)
	}
	return w.sc.Rename(tmp, target)
}

// keepOwner gives f the old file's owner and group when they differ (only
// root may, usually); failures are ignored.
func keepOwner(f *sftp.File, old fs.FileInfo) {
	want, ok := old.Sys().(*sftp.FileStat)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil {
		return
	}
	if got, ok := fi.Sys().(*sftp.FileStat); ok && (got.UID != want.UID || got.GID != want.GID) {
		f.Chown(int(want.UID), int(want.GID))
	}
}

// resolveLinks follows symbolic links at p and returns the final path and
// its FileInfo (nil when it does not exist yet).
func resolveLinks(sc *sftp.Client, p string) (string, fs.FileInfo, error) {
	for range 40 {
		fi, err := sc.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil
		}
		target, err := sc.ReadLink(p)
		if err != nil {
			return "", nil, err
		}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = target
	}
	return "", nil, syscall.ELOOP
}

func (c *conn) warnNoFsync(warn func(string)) {
	c.mu.Lock()
	first := !c.noFsync
	c.noFsync = true
	c.mu.Unlock()
	if first {
		warn("Warning: the SFTP server does not support fsync@openssh.com; written files are renamed into place without fsync")
	}
}

func isUnsupported(err error) bool {
	var se *sftp.StatusError
	return errors.As(err, &se) && se.FxCode() == sftp.ErrSSHFxOpUnsupported ||
		errors.Is(err, sftp.ErrSSHFxOpUnsupported)
}

// fileErr turns an SFTP error into the transport's: the operation and
// path, fs.ErrNotExist / fs.ErrPermission kept, a lost connection (or SFTP
// subsystem) as transport.ErrConnection.
func (t *Transport) fileErr(c *conn, sc *sftp.Client, op, p string, err error) error {
	var ce *callerError
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %s: %w", op, p, err)
	case errors.As(err, &ce):
		return &fs.PathError{Op: op, Path: p, Err: ce.err}
	case !c.alive():
		return fmt.Errorf("%s %s: %w", op, p, t.lostErr(c, err))
	case errors.Is(err, sftp.ErrSSHFxConnectionLost) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed):
		sc.Close() // the SFTP channel is gone; the next call opens another
		return fmt.Errorf("%s %s: %w: sftp: %w", op, p, transport.ErrConnection, err)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// callerError is an error of the caller's reader or writer: not the
// connection's.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }

// call runs fn, returning early when ctx is done (fn then finishes alone:
// pkg/sftp calls cannot be cancelled, a dead connection ends them).
func call[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := fn()
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// gatedWriter passes writes to w until closed, counting them; once close
// returns, w is never written again.
type gatedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	n      int64
	closed bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, context.Canceled
	}
	n, err := g.w.Write(p)
	g.n += int64(n)
	if err != nil {
		err = &callerError{err}
	}
	return n, err
}

func (g *gatedWriter) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (g *gatedWriter) count() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// gatedReader reads from r until closed; once close returns, r is never
// read again.
type gatedReader struct {
	mu     sync.Mutex
	r      io.Reader
	closed bool
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, context.Canceled
	}
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = &callerError{err}
	}
	return n, err
}

func (g *gatedReader) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// ReadDir describes the entries of the directory at path over SFTP,
// symbolic links not followed (transport.DirReader).
func (t *Transport) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	if t.viaShell(ctx) {
		return t.shellReadDir(ctx, p)
	}
	c, sc, home, err := t.files(ctx)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", p, err)
	}
	if !strings.HasPrefix(p, "/") {
		p = t.expandHome(p, home)
	}
	fis, err := call(ctx, func() ([]fs.FileInfo, error) { return sc.ReadDir(p) })
	if err != nil {
		return nil, t.fileErr(c, sc, "read directory", p, err)
	}
	return fis, nil
}

// newSFTPClient starts the SFTP subsystem on a session of client, as
// sftp.NewClient does, except that a server that does not answer as an
// SFTP server has its session ended and waited for (bounded by
// closeWait) before the call returns: on a gated Dropbear (gatedDropbear)
// no session's process may exit after the gate is given back.
func newSFTPClient(client *gossh.Client) (*sftp.Client, error) {
	s, err := client.NewSession()
	if err != nil {
		return nil, err
	}
	pw, err := s.StdinPipe()
	if err != nil {
		s.Close()
		return nil, err
	}
	pr, err := s.StdoutPipe()
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Stderr = io.Discard
	if err := s.RequestSubsystem("sftp"); err != nil {
		s.Close()
		return nil, err
	}
	sc, err := sftp.NewClientPipe(pr, pw, sftpOptions...)
	if err != nil {
		ended := make(chan struct{})
		go func() {
			io.Copy(io.Discard, pr)
			s.Wait()
			close(ended)
		}()
		select {
		case <-ended:
		case <-time.After(closeWait):
		}
		s.Close()
		return nil, err
	}
	if _, ok := sc.HasExtension("limits@openssh.com"); ok {
		// OpenSSH 8.6 and later (also as Dropbear's sftp-server) take
		// messages of 256 KiB; pkg/sftp cannot ask for the exact limits,
		// but a server with the extension has at least those. Fewer,
		// larger packets cost the host and agent less CPU per byte
		// (docs/bench.md, transfers). Set before the client is shared.
		if err := sftp.MaxPacketUnchecked(bigPacket)(sc); err != nil {
			sc.Close()
			return nil, err
		}
	}
	go func() { // the client's end is the session's
		sc.Wait()
		s.Close()
	}()
	return sc, nil
}

// FilesAhead starts the SFTP subsystem in the background on the current
// connection, when it is up and the file methods may use SFTP
// (transport.FilesAheader): a plan's first file call then finds it open.
// It dials nothing; a failure is left to the call that needs it.
func (t *Transport) FilesAhead() {
	if t.opts.ShellFiles || t.fileVia.Load() == filesShell {
		return
	}
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c == nil || !c.alive() {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ungate, err := t.gate(ctx)
		if err != nil {
			return
		}
		defer ungate()
		c.sftpClient(ctx)
	}()
}
