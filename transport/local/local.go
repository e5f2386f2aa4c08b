// Package local implements transport.Transport on the machine agent runs on:
// commands through /bin/sh -c in their own process group, files through the
// operating system with atomic replacement.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/autoshell/agent/transport"
)

// waitDelay bounds how long Run waits for output after the command's process
// group was killed: a process that escaped the group (setsid) may still hold
// the pipes. A variable for tests.
var waitDelay = 2 * time.Second

// Transport runs commands and file operations on the local machine.
type Transport struct {
	home    string
	user    string
	passEnv []string
	closed  atomic.Bool
	// noDirect: every command through sh (tests); directs counts the
	// commands started without it (direct.go).
	noDirect bool
	directs  atomic.Int64
}

// The transport and its optional capabilities (transport.As).
var (
	_ transport.Transport  = (*Transport)(nil)
	_ transport.RealPather = (*Transport)(nil)
	_ transport.HomeDirer  = (*Transport)(nil)
	_ transport.DirReader  = (*Transport)(nil)
	_ transport.Inspector  = (*Transport)(nil)
	_ transport.Preparer   = (*Transport)(nil)
)

// Batches says the transport takes a batch's commands
// (transport.Batch): it runs each in turn as it comes, as soon as the one
// before it succeeded (transport.Batch.InTurn), so that a command starts
// while agent records the steps before it.
func (t *Transport) Batches() bool { return true }

// BatchesInTurn says each command of a batch may be given as soon as its
// step is prepared (transport.TurnBatcher).
func (t *Transport) BatchesInTurn() bool { return true }

var _ transport.TurnBatcher = (*Transport)(nil)

// New returns a local transport acting as the current user.
func New() (*Transport, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("local transport: %w", err)
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return &Transport{home: home, user: name}, nil
}

// PassEnv names the variables of agent's environment that commands get
// besides transport.StepEnvAllowed (the operator's safety: pass_env).
// Call it before the first Run.
func (t *Transport) PassEnv(names []string) { t.passEnv = slices.Clone(names) }

// Host describes the local machine.
func (t *Transport) Host() transport.HostInfo {
	return transport.HostInfo{Name: "local", Kind: "local", User: t.user}
}

// Close marks the transport closed; there is nothing to release.
func (t *Transport) Close() error {
	t.closed.Store(true)
	return nil
}

// expand resolves "~" forms against the home directory; other paths are
// used as they are (relative ones against the process's working directory).
func (t *Transport) expand(p string) (string, error) {
	if t.closed.Load() {
		return "", transport.ErrClosed
	}
	if p == "" {
		return "", errors.New("empty path")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		return transport.ExpandHome(p, t.home), nil
	}
	return p, nil
}

// Run runs c.Command with /bin/sh -c (under c.Wrap when set) in a new
// process group, in agent's environment cut to transport.StepEnv; on
// timeout or cancellation the whole group is killed. A command of plain
// words naming a program is executed directly, as sh would (direct.go).
func (t *Transport) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	if b, i := transport.BatchOf(ctx); b != nil {
		return b.InTurn(ctx, i, func(ctx context.Context) (transport.Result, error) {
			return t.Run(transport.WithoutBatch(ctx), c)
		})
	}
	if t.closed.Load() {
		return transport.Result{}, transport.ErrClosed
	}
	return t.prepare(c).run(ctx)
}

// Prepare does ahead of c's run what does not depend on when it runs —
// its environment, its directory, where its program is (transport.Preparer):
// a batch's command is prepared in its step's goroutine while the
// commands before it run, and its run (on the step's confined thread,
// once the one before ended) starts it at once. The program is looked
// for in PATH then: the steps of a batch before it are read-only, so
// what they run cannot put one in its way.
func (t *Transport) Prepare(c transport.Command) func(ctx context.Context) (transport.Result, error) {
	p := t.prepare(c)
	return func(ctx context.Context) (transport.Result, error) {
		if t.closed.Load() {
			return transport.Result{}, transport.ErrClosed
		}
		return p.run(ctx)
	}
}

// prepared is a command ready to run.
type prepared struct {
	t      *Transport
	c      transport.Command
	env    []string
	dir    string
	dirErr error
	// raw: it may be started without os/exec (spawn_linux.go): direct
	// names its program and words (denv its environment) when it is
	// executed without sh; rawEnv is env as spawn passes it.
	raw         bool
	prog        string
	words, denv []string
	rawEnv      []string
}

func (t *Transport) prepare(c transport.Command) *prepared {
	// A command starts from the allow-list, never from agent's whole
	// environment (its API key, AGENT_* settings): the confined thread and
	// the launcher (which execs with what it was given) inherit this.
	p := &prepared{t: t, c: c, env: transport.StepEnv(os.Environ(), t.passEnv)}
	if c.Dir != "" {
		p.dir, p.dirErr = t.expand(c.Dir)
		if p.dirErr != nil {
			return p
		}
	}
	if c.Stdin != nil || !rawStarts() {
		return p
	}
	env, ok := dedupEnv(p.env)
	if !ok {
		return p // os/exec says why
	}
	p.raw, p.rawEnv = true, env
	if len(c.Wrap) > 0 || t.noDirect {
		return p
	}
	words := directWords(c.Command)
	if words == nil {
		return p
	}
	prog, err := lookProgram(words[0], env, p.dir)
	if err != nil {
		return p
	}
	if denv, err := shellPWD(env, p.dir); err == nil {
		p.prog, p.words, p.denv = prog, words, denv
	}
	return p
}

func (p *prepared) run(ctx context.Context) (transport.Result, error) {
	c, t := p.c, p.t
	if p.dirErr != nil {
		return transport.Result{}, fmt.Errorf("run: dir: %w", p.dirErr)
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()

	stdout, stderr := transport.NewCapture(c.CaptureLimit), transport.NewCapture(c.CaptureLimit)
	start := time.Now()
	if p.raw {
		if ch, err := p.spawn(); err == nil {
			transport.Started(ctx, ch.pid) // Setpgid: its PID is its group
			ws, werr := ch.wait(runCtx, transport.Tee(stdout, c.Stdout), transport.Tee(stderr, c.Stderr), c.Stdout == nil && c.Stderr == nil)
			return finish(ctx, runCtx, c, exitStatus(ws), werr, stdout, stderr, start)
		} else if !errors.Is(err, errNoRaw) {
			return transport.Result{}, fmt.Errorf("run %q: %w", c.Command, err)
		}
	}
	env, dir := p.env, p.dir
	// The output pipes are agent's own (pipes.go): os/exec's WaitDelay
	// would close them with what the command wrote still in them.
	outP, err := newOutPipe()
	if err != nil {
		return transport.Result{}, fmt.Errorf("run %q: %w", c.Command, err)
	}
	errP, err := newOutPipe()
	if err != nil {
		outP.abandon()
		return transport.Result{}, fmt.Errorf("run %q: %w", c.Command, err)
	}
	command := func(argv []string, env []string) *exec.Cmd {
		cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = env, dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = waitDelay // for stdin's copy
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, outP.w, errP.w
		return cmd
	}
	cmd := t.direct(c, env, dir, command)
	if cmd == nil {
		cmd = command(append(slices.Clone(c.Wrap), "/bin/sh", "-c", c.Command), env)
		if err := cmd.Start(); err != nil {
			outP.abandon()
			errP.abandon()
			return transport.Result{}, fmt.Errorf("run %q: %w", c.Command, err)
		}
	}
	outP.start(transport.Tee(stdout, c.Stdout))
	errP.start(transport.Tee(stderr, c.Stderr))
	transport.Started(ctx, cmd.Process.Pid) // Setpgid: its PID is its group
	waitErr := cmd.Wait()
	deadline := time.Now().Add(waitDelay)
	outP.finish(deadline)
	errP.finish(deadline)
	var exitErr *exec.ExitError
	if waitErr != nil && (errors.As(waitErr, &exitErr) || errors.Is(waitErr, exec.ErrWaitDelay)) {
		waitErr = nil
	}
	return finish(ctx, runCtx, c, exitCode(cmd.ProcessState), waitErr, stdout, stderr, start)
}

// finish is Run's result once the command ended with code (waitErr: it
// could not be waited for).
func finish(ctx, runCtx context.Context, c transport.Command, code int, waitErr error, stdout, stderr *transport.Capture, start time.Time) (transport.Result, error) {
	res := transport.Captured(code, stdout, stderr, time.Since(start))
	switch {
	case ctx.Err() != nil:
		res.ExitCode = -1 // killed by us: the status is not the command's
		return res, fmt.Errorf("run %q: %w", c.Command, ctx.Err())
	case runCtx.Err() != nil:
		res.ExitCode = -1
		return res, fmt.Errorf("run %q: killed after %v: %w", c.Command, c.Timeout, transport.ErrTimeout)
	}
	if waitErr != nil {
		return res, fmt.Errorf("run %q: %w", c.Command, waitErr)
	}
	return res, nil
}

// spawn starts the command as Run does (directly when it is one simple
// command of plain words, else through sh, under c.Wrap), without
// os/exec (spawn_linux.go); errNoRaw when os/exec must start it.
func (p *prepared) spawn() (*child, error) {
	if p.prog != "" {
		// argv[0] is the word typed, as sh passes it; a program that
		// cannot be executed (ENOEXEC, EACCES…) goes to sh, which says
		// why.
		if ch, err := spawn(p.prog, p.words, p.denv, p.dir); err == nil {
			p.t.directs.Add(1)
			return ch, nil
		}
	}
	argv := append(slices.Clone(p.c.Wrap), "/bin/sh", "-c", p.c.Command)
	return spawn(argv[0], argv, p.rawEnv, p.dir)
}

// direct starts c's command without sh when it is one simple command of
// plain words (direct.go): the started command, or nil when sh must run
// it (nothing was started then).
func (t *Transport) direct(c transport.Command, env []string, dir string, command func(argv, env []string) *exec.Cmd) *exec.Cmd {
	if len(c.Wrap) > 0 || t.noDirect {
		return nil
	}
	words := directWords(c.Command)
	if words == nil {
		return nil
	}
	prog, err := lookProgram(words[0], env, dir)
	if err != nil {
		return nil
	}
	if env, err = shellPWD(env, dir); err != nil {
		return nil
	}
	// prog has a slash: no look-up in agent's own PATH; argv[0] is the
	// word typed, as sh passes it.
	cmd := command(append([]string{prog}, words[1:]...), env)
	cmd.Args[0] = words[0]
	if cmd.Start() != nil {
		return nil // not run (ENOEXEC, EACCES…): sh runs it, and says why
	}
	t.directs.Add(1)
	return cmd
}

// ReadFile copies the file at path into w.
func (t *Transport) ReadFile(ctx context.Context, path string, w io.Writer) (int64, error) {
	p, err := t.expand(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	// A fifo, socket or device is refused before it is opened; one put
	// there since is opened without waiting (O_NONBLOCK) and refused.
	if fi, err := os.Stat(p); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, unwrapPathError(err))
	} else if err := special(fi); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	} else if fi.IsDir() {
		return 0, fmt.Errorf("read %s: %w", path, syscall.EISDIR)
	} else if err := special(fi); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	n, err := io.Copy(w, ctxReader{ctx, f})
	if err != nil {
		return n, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}

// special is transport.ErrSpecialFile, with what it is, for anything but
// a regular file or a directory.
func special(fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular(), m.IsDir():
		return nil
	case m&fs.ModeNamedPipe != 0:
		return fmt.Errorf("fifo: %w", transport.ErrSpecialFile)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("socket: %w", transport.ErrSpecialFile)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("device: %w", transport.ErrSpecialFile)
	}
	return transport.ErrSpecialFile
}

// WriteFile atomically replaces the file at path with the content of r.
func (t *Transport) WriteFile(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error) {
	p, err := t.expand(path)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	n, err := writeAtomic(ctx, p, r, perm)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

func writeAtomic(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (n int64, err error) {
	mode := perm.Perm()
	if mode == 0 {
		mode = 0o644
	}
	p, old, err := resolveLinks(p)
	if err != nil {
		return 0, err
	}
	if old != nil {
		if old.IsDir() {
			return 0, syscall.EISDIR
		}
		mode = old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	dir, base := filepath.Split(p)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".agent-*")
	if err != nil {
		return 0, unwrapPathError(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if n, err = io.Copy(tmp, ctxReader{ctx, r}); err != nil {
		return n, err
	}
	if old != nil {
		// Keep the owner where allowed (root). Before chmod: chown clears setuid.
		if st, ok := old.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
			tmp.Chown(int(st.Uid), int(st.Gid))
		}
	}
	if err = tmp.Chmod(mode); err != nil {
		return n, err
	}
	if err = tmp.Sync(); err != nil {
		return n, err
	}
	if err = tmp.Close(); err != nil {
		return n, err
	}
	if err = os.Rename(tmp.Name(), p); err != nil {
		return n, unwrapPathError(err)
	}
	if d, derr := os.Open(dir); derr == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return n, nil
}

// resolveLinks follows symbolic links at p, so that a write replaces the
// file a link points to and keeps the link, and returns the final path and
// its FileInfo (nil when it does not exist yet).
func resolveLinks(p string) (string, fs.FileInfo, error) {
	for range 40 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, unwrapPathError(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", nil, unwrapPathError(err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", nil, syscall.ELOOP
}

// Stat describes the file at path, following symbolic links.
func (t *Transport) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	p, err := t.expand(path)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, unwrapPathError(err))
	}
	return fi, nil
}

// unwrapPathError drops the *fs.PathError layer, whose text repeats the
// path that the caller's wrapping already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// ctxReader stops a copy when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// exitCode is the status as a shell reports it: 128+N for death by signal N.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// ReadDir describes the entries of the directory at path, symbolic links
// not followed (transport.DirReader).
func (t *Transport) ReadDir(ctx context.Context, path string) ([]fs.FileInfo, error) {
	p, err := t.expand(path)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read directory %s: %w", path, err)
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", path, unwrapPathError(err))
	}
	out := make([]fs.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // removed since it was listed
		}
		out = append(out, fi)
	}
	return out, nil
}
