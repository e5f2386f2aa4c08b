package transport

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Transport runs commands and moves files on one host: the local machine or a
// host reached over SSH/SFTP. Implementations are safe for concurrent use by
// several goroutines; each method honours ctx (cancellation and deadline).
//
// Paths given to the file methods may start with "~" or "~/", which mean the
// home directory of the user the transport acts as (on an SSH host: the
// remote user). Relative paths are relative to that home directory on SSH
// hosts and to the working directory of the agent process locally.
//
// Errors wrap the operation and path ("read /etc/x: ..."). A missing file
// satisfies errors.Is(err, fs.ErrNotExist), a refused one
// errors.Is(err, fs.ErrPermission), a lost connection errors.Is(err,
// ErrConnection).
type Transport interface {
	// Run runs cmd.Command with the host's "/bin/sh -c" and waits for it.
	//
	// A command that ran and exited non-zero is not an error: its status is
	// Result.ExitCode. Stdout and stderr are captured separately and bounded
	// (see Capture): a command that prints gigabytes does not grow memory.
	//
	// When cmd.Timeout passes or ctx is done, the whole process group of the
	// command is killed (on an SSH host: signalled with KILL and its channel
	// closed), Run returns what was captured so far and an error that
	// satisfies errors.Is(err, ErrTimeout) or errors.Is(err, ctx.Err()).
	// Run returns an error without a Result only when the command could not
	// be started (connection lost, no such directory for cmd.Dir, ...).
	Run(ctx context.Context, cmd Command) (Result, error)

	// ReadFile streams the content of the file at path into w and returns
	// the number of bytes written. It fails on directories, and on a
	// fifo, socket or device with an error wrapping ErrSpecialFile without
	// opening it where it can tell for free (this machine, a shell read;
	// SFTP cannot: callers that may meet one Stat first). Large files are
	// transferred with concurrent requests where the transport supports it.
	ReadFile(ctx context.Context, path string, w io.Writer) (int64, error)

	// WriteFile replaces the file at path with everything read from r,
	// atomically: the data goes to a temporary file in the same directory,
	// is synced, and is renamed over path only when complete. An error or
	// an interruption at any point leaves the old file (or its absence)
	// intact and removes the temporary file where it still can. An existing
	// file keeps its permission bits; a new one gets perm (0644 when zero).
	// The parent directory must exist. It returns the number of bytes
	// written.
	WriteFile(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error)

	// Stat describes the file at path, following symbolic links.
	Stat(ctx context.Context, path string) (fs.FileInfo, error)

	// Host describes the host this transport reaches. It does no I/O.
	Host() HostInfo

	// Close releases the connection and everything it holds. Calls after
	// Close fail with ErrClosed. Close is idempotent.
	Close() error
}

// Command is a command line for Transport.Run.
type Command struct {
	// Command is the shell command line, run by the target's "/bin/sh -c".
	Command string
	// Dir is the working directory; empty means the user's home on SSH hosts
	// and the agent's working directory locally. "~" is expanded.
	Dir string
	// Stdin, when set, is copied to the command's standard input.
	Stdin io.Reader
	// Timeout, when positive, bounds the command's run time.
	Timeout time.Duration
	// CaptureLimit is how many bytes of each stream's head and of its tail
	// are kept (zero means DefaultCaptureLimit).
	CaptureLimit int
	// Stdout and Stderr, when set, also receive each stream in full as the
	// command prints it (for a terminal or a file); Result still holds the
	// bounded capture. They are written from other goroutines.
	Stdout, Stderr io.Writer
	// Wrap, when set, is the argv the command's shell runs under: the
	// transport runs Wrap[0] with the arguments Wrap[1:] followed by the
	// shell and its arguments ("/bin/sh", "-c", Command), in Dir, in the
	// command's own process group, so that a timeout kills it all. Wrap[0]
	// is a path on the host (or a name looked up in its PATH). Wrappers
	// compose by prefixing: sudo's argv, then a confining launcher's
	// (package confine), then the shell.
	Wrap []string
	// Ahead says that Wrap does the same whatever the command and records
	// nothing of it (a confining launcher; never sudo, whose log names the
	// command): a transport may start Wrap and the shell under it before
	// the command is known, and hand the command to the shell so started
	// when its Wrap is exactly the same. It never hands a command to a
	// shell started under another Wrap.
	Ahead bool
}

// lastStepKey marks a context as the last step of a task (WithLastStep).
type lastStepKey struct{}

// WithLastStep marks ctx as the last step of a task on its transport (a
// plan's last step): no command is expected after the ones it runs, so a
// transport that prepares for the next command as soon as one ends (the
// SSH worker's /bin/sh started ahead) need not. A hint only: a command
// that comes anyway runs as it would otherwise.
func WithLastStep(ctx context.Context) context.Context {
	return context.WithValue(ctx, lastStepKey{}, true)
}

// IsLastStep reports whether ctx was marked by WithLastStep.
func IsLastStep(ctx context.Context) bool {
	v, _ := ctx.Value(lastStepKey{}).(bool)
	return v
}

// Tee returns w, or w and extra together when extra is set: what a transport
// writes a stream to.
func Tee(w io.Writer, extra io.Writer) io.Writer {
	if extra == nil {
		return w
	}
	return io.MultiWriter(w, extra)
}

// Result is the outcome of a command that ran.
type Result struct {
	// ExitCode is the command's exit status, 128+N when it died of signal
	// N (as a shell reports it), -1 when its status is unknown (timeout,
	// cancellation, lost connection).
	ExitCode int
	// Stdout and Stderr are the captured streams, bounded: when a stream was
	// longer than twice the capture limit, its middle is replaced by a
	// marker "... [output truncated: N bytes omitted] ...".
	Stdout, Stderr string
	// StdoutBytes and StderrBytes count every byte the command printed.
	StdoutBytes, StderrBytes int64
	// Duration is the wall time from start to exit.
	Duration time.Duration
}

// Success reports whether the command exited with status 0.
func (r Result) Success() bool { return r.ExitCode == 0 }

// HostInfo describes the host a transport reaches.
type HostInfo struct {
	// Name is the name the host was asked for: an ~/.ssh/config alias or
	// inventory name, or "local".
	Name string
	// Kind is "local" or "ssh".
	Kind string
	// Addr is "host:port" for SSH hosts, empty locally.
	Addr string
	// User is the user commands run as.
	User string
}
