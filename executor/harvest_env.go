package executor

import (
	"context"
	"fmt"
	"regexp"

	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/transport"
)

// A step that prints its environment (`env | base64`, `printenv | rev`,
// `declare -p`, `echo "$GITHUB_TOKEN" | rev`) shows the host's variables:
// on agent's own machine its environment's secrets are in the set from
// the start, but a host's (exported by its ~/.bashrc, /etc/environment,
// pam_env) are not. harvestEnv reads the variables whose names say secret
// first, through the step's transport (the same login, the same
// environment), and teaches them to the set.

// readsEnvironment matches a command that prints the environment.
var readsEnvironment = regexp.MustCompile(`(?:^|[\s|;&(` + "`" + `])(?:env|printenv|set|declare|typeset|export|compgen)(?:$|[\s|;&)` + "`" + `])`)

// varRef matches a variable's expansion: $NAME, ${NAME…}.
var varRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// envListing prints the environment's secret-named variables, a line
// each (a value with a newline in it: its first line).
const envListing = `env 2>/dev/null | grep -iE '^[a-z0-9_.-]*(pass|pwd|pw|secret|token|key|auth|cred|private|psk|session|cookie|jwt|salt|hmac|otp|oauth)[a-z0-9_.-]*='`

// printsEnvironment reports whether command shows environment variables:
// it runs env and its like, or expands a secret-named variable.
func printsEnvironment(command string) bool {
	if readsEnvironment.MatchString(command) {
		return true
	}
	for _, m := range varRef.FindAllStringSubmatch(command, 16) {
		if redact.SecretName(m[1]) {
			return true
		}
	}
	return false
}

// harvestEnv teaches the set the secret-named variables of the
// environment commands run with on tr's host.
// An error: the listing did not finish (harvestUnfinished).
func (e *Executor) harvestEnv(ctx context.Context, tr transport.Transport) error {
	r, err := tr.Run(ctx, transport.Command{Command: envListing, Timeout: harvestTimeout, CaptureLimit: listingLimit})
	e.cfg.Secrets.HarvestListing(r.Stdout)
	if err != nil {
		return fmt.Errorf("environment listing: %w", err)
	}
	return nil
}
