package stepgen

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/autoshell/agent/transport"
)

// envCommand prints the facts the model needs about the target in one
// round trip: OS and kernel, shell, user, home, working directory, the container CLI.
//
// It is one shell and, on Linux, nothing else: the kernel's name and
// release come from /proc/sys/kernel (what uname(2) reports), the user
// from the effective uid in /proc/self/status looked up in /etc/passwd
// (what id -un finds there first), the directory from the pwd builtin. A
// process start costs 1–3 ms on a loaded host, and uname and id were two
// of them in every task (issue 4). Where /proc or the passwd entry is
// missing (other systems, users only in LDAP), it falls back to the
// command substitutions it used before: uname -sr; id -un, whoami,
// "unknown". The lines and their order do not change.
const envCommand = `if { read -r s </proc/sys/kernel/ostype && read -r r </proc/sys/kernel/osrelease; } 2>/dev/null && [ -n "$s" ]; ` +
	`then printf 'os: %s %s\n' "$s" "$r"; else printf 'os: %s\n' "$(uname -sr 2>/dev/null || echo unknown)"; fi; ` +
	`printf 'shell: %s\n' "${SHELL:-unknown}"; ` +
	`u=; e=; { while read -r k a b c; do if [ "$k" = Uid: ]; then e=$b; break; fi; done; } 2>/dev/null </proc/self/status; ` +
	`[ -n "$e" ] && { while IFS=: read -r n p i c; do if [ "$i" = "$e" ]; then u=$n; break; fi; done; } 2>/dev/null </etc/passwd; ` +
	`if [ -n "$u" ]; then printf 'user: %s\n' "$u"; else printf 'user: %s\n' "$(id -un 2>/dev/null || whoami 2>/dev/null || echo unknown)"; fi; ` +
	`printf 'home: %s\n' "$HOME"; ` +
	`printf 'cwd: '; pwd; ` +
	envContainers

// envContainers names the container CLI the container_* tools use on the
// target (tools.containerLine's choice: docker when its daemon answers or
// podman is absent, else podman).
const envContainers = `if command -v docker >/dev/null 2>&1 && { ! command -v podman >/dev/null 2>&1 || docker version >/dev/null 2>&1; }; ` +
	`then echo 'containers: docker (container_* tools)'; elif command -v podman >/dev/null 2>&1; ` +
	`then echo 'containers: podman (container_* tools)'; else echo 'containers: none (no docker or podman)'; fi`

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
