package transport

import "strings"

// StepEnvAllowed are the variables a command agent starts keeps from
// agent's own environment: what programs need to find themselves, the
// user, the terminal, the language and the time. Everything else — the
// model's API key (OPENAI_API_KEY, or the variable api_key_env names),
// AGENT_* settings, tokens the operator's shell exported — stays in agent.
// The XDG_* variables are paths, not secrets: systemctl --user needs
// XDG_RUNTIME_DIR, and a step's programs must find the configuration the
// operator's XDG_CONFIG_HOME points them to (agent's own directories
// there are protected by the policy as they are in ~). A name ending in
// "*" is a prefix.
var StepEnvAllowed = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*",
	"TERM", "TZ", "TMPDIR", "XDG_*"}

// StepEnv is environ ("NAME=value" entries, as os.Environ gives them)
// cut to StepEnvAllowed and the names in pass (the operator's explicit
// additions, safety.Policy.PassEnv). Order is kept; an entry without
// "=" is dropped.
func StepEnv(environ, pass []string) []string {
	out := make([]string, 0, len(StepEnvAllowed)+len(pass))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if envListed(name, StepEnvAllowed) || envListed(name, pass) {
			out = append(out, kv)
		}
	}
	return out
}

func envListed(name string, list []string) bool {
	for _, l := range list {
		if p, ok := strings.CutSuffix(l, "*"); ok && strings.HasPrefix(name, p) || l == name {
			return true
		}
	}
	return false
}
