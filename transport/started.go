package transport

import "context"

// startedKey carries a Started hook in a context (WithStarted).
type startedKey struct{}

// WithStarted returns ctx carrying f: a transport that starts a command
// in a process group of its own calls f with that group's ID on the
// target (locally, or on the SSH host) once it is known, so that a record
// of it outlives agent (a SIGKILL leaves the command running; the next
// `agent mcp` reaps it: mcpserver/reap.go).
func WithStarted(ctx context.Context, f func(pgid int)) context.Context {
	return context.WithValue(ctx, startedKey{}, f)
}

// Started calls ctx's Started hook, if any, with pgid (ignored unless
// positive).
func Started(ctx context.Context, pgid int) {
	if f, ok := ctx.Value(startedKey{}).(func(int)); ok && f != nil && pgid > 0 {
		f(pgid)
	}
}
