package main

import (
	"os"
	"strings"

	"github.com/autoshell/agent/redact"
)

// secretSet is the run's secret set (redact.Set), shared by its hosts,
// the model's requests, the transcript, the audit log and the session
// record. It is made on first use with agent's own secrets: the
// environment variables whose names say secret (OPENAI_API_KEY,
// DEEPSEEK_API_KEY, GITHUB_TOKEN, …), so that `printenv | base64` shows
// none of them. The model's API key and --secret-var values are added
// where they are known.
func (a *app) secretSet() *redact.Set {
	a.secretsOnce.Do(func() {
		a.secrets = redact.NewSet()
		a.secrets.AddEnviron(os.Environ())
	})
	return a.secrets
}

// secretVars adds each --secret-var k=v to vars (as --var k=v) and to the
// run's secret set as Known, and remembers its name: the session record
// leaves its value out (agent resume asks for it with --var).
func (a *app) secretVars(vars, secret []string) ([]string, error) {
	for _, kv := range secret {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--secret-var %q: want name=value", kv)
		}
		a.secretSet().Add(k, v, redact.Known)
		a.secretVarNames = append(a.secretVarNames, k)
		vars = append(vars, kv)
	}
	return vars, nil
}
