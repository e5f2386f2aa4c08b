package confine

import "strings"

// A confined command's environment. On agent's machine a step already
// starts from an allow-list of agent's environment (transport.StepEnv);
// on an SSH host it has the host's login environment, which agent does
// not send but which may carry the account's own tokens (exported in a
// start-up file, /etc/environment, ~/.ssh/environment). A command the
// launcher or the served worker starts confined — a step nobody
// approved — loses every variable whose name says it holds a secret, so
// that `printenv` cannot hand them to the model; the rest (PATH,
// JAVA_HOME, LD_LIBRARY_PATH: what the host's programs need) is kept.

// secretEnvWords mark a variable's name as a secret's (upper case).
var secretEnvWords = []string{"KEY", "TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL", "AUTH", "COOKIE", "PRIVATE", "SESSION_ID"}

// secretEnvName reports whether a variable's name says it holds a secret;
// PWD and OLDPWD are the shell's.
func secretEnvName(name string) bool {
	if name == "PWD" || name == "OLDPWD" {
		return false
	}
	up := strings.ToUpper(name)
	for _, w := range secretEnvWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// stepEnviron is env ("NAME=value") without the secret-named variables.
func stepEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !secretEnvName(name) {
			out = append(out, kv)
		}
	}
	return out
}
