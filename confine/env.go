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

// SecretEnvPrologue is POSIX shell text that unsets, in the shell it runs
// in, every exported variable whose name says it holds a secret (the
// names secretEnvName drops). It is the same cut for a step that runs
// where the kernel cannot confine it (an SSH host without Landlock): the
// transport runs the step's command after it in one shell, so the
// command and what it starts never see the host's tokens. Builtins only
// but one fork (the command substitution); `export -p` prints `export
// NAME=…` (dash, busybox ash, bash as sh) or `declare -x NAME=…` (bash);
// a line of a multi-line value that happens to look like a secret's name
// only unsets a variable that had no business reaching the step anyway.
// Globbing and IFS are restored to the shell's own.
func SecretEnvPrologue() string {
	var pat strings.Builder
	for i, w := range secretEnvWords {
		if i > 0 {
			pat.WriteString("|")
		}
		pat.WriteString("*")
		for _, r := range w {
			if r >= 'A' && r <= 'Z' {
				pat.WriteString("[" + string(r) + string(r+'a'-'A') + "]")
			} else {
				pat.WriteRune(r)
			}
		}
		pat.WriteString("*")
	}
	return `agent_e=$(export -p); agent_i=$IFS; IFS='
'; set -f; for agent_n in $agent_e; do agent_n=${agent_n#export }; agent_n=${agent_n#declare -x }; agent_n=${agent_n%%=*}; ` +
		`case $agent_n in PWD|OLDPWD|''|[0-9]*|*[!A-Za-z0-9_]*) ;; ` + pat.String() + `) unset "$agent_n" ;; esac; done; ` +
		`set +f; IFS=$agent_i; unset agent_e agent_i agent_n
`
}
