package stepgen

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/autoshell/agent/transport"
)

// envCommand prints the facts the model needs about the target in one
// round trip: OS and kernel, shell, user, home, working directory, docker.
const envCommand = `printf 'os: %s\n' "$(uname -sr 2>/dev/null || echo unknown)"; ` +
	`printf 'shell: %s\n' "${SHELL:-unknown}"; ` +
	`printf 'user: %s\n' "$(id -un 2>/dev/null || whoami 2>/dev/null || echo unknown)"; ` +
	`printf 'home: %s\n' "$HOME"; ` +
	`printf 'cwd: %s\n' "$(pwd)"; ` +
	`if command -v docker >/dev/null 2>&1; then echo 'docker: present'; else echo 'docker: absent'; fi`

// Environment describes the target host for the model, from one command
// run through tr. A command that fails still gives what it printed; only
// a broken transport is an error.
func Environment(ctx context.Context, tr transport.Transport) (string, error) {
	res, err := tr.Run(ctx, transport.Command{Command: envCommand, Timeout: 30 * time.Second})
	if err != nil {
		return "", fmt.Errorf("environment of %s: %w", tr.Host().Name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "host: %s\n", tr.Host().Name)
	b.WriteString(strings.TrimSpace(res.Stdout))
	return b.String(), nil
}
