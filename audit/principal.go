package audit

import (
	"context"
	"os"
	"os/user"
	"strconv"
	"sync"
)

type principalKey struct{}

// WithPrincipal says who asks for the steps run with ctx: a front end
// that serves others (agent mcp) names its client.
func WithPrincipal(ctx context.Context, p string) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Principal is who asks for the steps run with ctx: WithPrincipal's, else
// the OS user agent runs as.
func Principal(ctx context.Context) string {
	if p, ok := ctx.Value(principalKey{}).(string); ok && p != "" {
		return p
	}
	return OSUser()
}

var osUser = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Getuid())
})

// OSUser is the name of the user agent runs as.
func OSUser() string { return osUser() }
