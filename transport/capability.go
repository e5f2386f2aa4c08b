package transport

import (
	"context"
	"io/fs"
)

// Optional capabilities. A transport may do more than Transport asks; each
// extra is a small interface here, and As finds it on a transport or on
// the one a decorator wraps (restic's AsBackend idea): a decorator that
// adds behaviour to a transport (the executor's output streaming, its
// confinement) implements Unwrapper and so keeps every capability of the
// transport below it without repeating them. A decorator that changes
// what a capability would answer — become, which acts as another user, so
// that "~", links and listings are that user's — implements its own and
// does not unwrap. The conformance suite (transporttest) checks each
// capability against what the host's own commands say.

// Unwrapper is implemented by a transport that adds behaviour to another:
// Unwrap returns the one below, through which As looks for capabilities.
type Unwrapper interface {
	Unwrap() Transport
}

// RealPather says where a path really is on the host, every symbolic link
// followed, without running a command where it can (local: the system
// calls; SSH: SFTP lstat and readlink; become: one `readlink -f` through
// sudo). It resolves as `readlink -f` does: "~" is the home, a relative
// path starts where the transport's file methods start, the last name may
// be missing (its directory is still resolved) and so may the target of a
// link at the end; a missing or non-directory component before it is an
// error wrapping fs.ErrNotExist or ENOTDIR, a loop of links ELOOP, a lost
// connection ErrConnection.
type RealPather interface {
	RealPath(ctx context.Context, path string) (string, error)
}

// HomeDirer says what "~" is on the host for the user the transport acts
// as: the $HOME its commands see, which its file methods expand "~" to.
// Implementations look it up once.
type HomeDirer interface {
	HomeDir(ctx context.Context) (string, error)
}

// Becomer is a host's transport acting as another user (transport/become):
// every command and file method runs as User through sudo.
type Becomer interface {
	Transport
	// User is the user it acts as.
	User() string
}

// As returns capability C of tr, or of the transport a chain of
// Unwrappers leads to from tr: the first in the chain that has it. ok is
// false when none has.
func As[C any](tr Transport) (c C, ok bool) {
	for tr != nil {
		if c, ok := tr.(C); ok {
			return c, true
		}
		u, ok := tr.(Unwrapper)
		if !ok {
			break
		}
		tr = u.Unwrap()
	}
	return c, false
}

// Inspector looks at a path in one call where RealPath, Stat and ReadFile
// would take three (through become, three sudo commands): a step looks at
// the files it will change before it runs, and then journals them.
// Inspect resolves path as RealPath does (its errors are RealPath's) and
// describes what is there as Stat does; with readMax > 0, a regular file
// of at most readMax bytes that the user may read is read too.
type Inspector interface {
	Inspect(ctx context.Context, path string, readMax int64) (Inspection, error)
}

// LookAheader is an Inspector that can look at several paths in one
// round trip (the SSH transport's served worker, confine's look request).
// InspectAll answers each path as Inspect would (errs[i] its error);
// ok[i] false leaves path i to Inspect (the worker could not say it as
// Inspect does: a link on the way, an error other than a missing name).
// It answers none (all false) when it cannot ask now.
type LookAheader interface {
	InspectAll(ctx context.Context, paths []string, readMax []int64) (in []Inspection, errs []error, ok []bool)
}

// Inspection is what Inspect found.
type Inspection struct {
	// Real is where the path really is, every symbolic link followed.
	Real string
	// Info describes the file at Real (Stat); nil when nothing is there.
	Info fs.FileInfo
	// UID and GID own the file at Real, when Owned.
	UID, GID int
	Owned    bool
	// Links is the file's hard-link count when the host said it (0: not
	// said; SFTP's attributes have no link count).
	Links int
	// Read: Content is the file's content (readMax asked for it, and it
	// is a regular file of at most readMax bytes the user may read).
	Content []byte
	Read    bool
}

// FilesAheader starts, in the background, what the file methods need (an
// SSH host's SFTP subsystem: three round trips), so that the first file
// call does not wait for it. It never fails: the call that needs it
// reports. The executor calls it when a plan's steps will look at files.
type FilesAheader interface {
	FilesAhead()
}
