package safety

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// passEnvList is safety: pass_env, checked as it is read.
type passEnvList []string

// UnmarshalYAML reads a list of names and refuses a bad one.
func (l *passEnvList) UnmarshalYAML(n *yaml.Node) error {
	var names []string
	if err := n.Decode(&names); err != nil {
		return err
	}
	if err := checkPassEnv(names); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*l = names
	return nil
}

// secretWords mark a variable's name as holding a secret: such a name is
// never passed to a step, whoever asks.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL", "AUTH", "COOKIE", "PRIVATE"}

// ErrSecretEnv refuses a variable whose name says it holds a secret.
var ErrSecretEnv = errors.New("names a secret")

// checkPassEnv checks the names the operator passes to steps (safety:
// pass_env): each a variable name, none secret-named (OPENAI_API_KEY,
// AGENT_MCP_TOKEN, DB_PASSWORD: never, whoever asks) and none of agent's
// own (AGENT_*). OLDPWD and PWD are the shell's to set.
func checkPassEnv(names []string) error {
	for _, n := range names {
		if !validEnvName(n) {
			return errors.New("pass_env: " + strconv.Quote(n) + " is not a variable name")
		}
		up := strings.ToUpper(n)
		if strings.HasPrefix(up, "AGENT_") {
			return errors.New("pass_env: " + n + " is agent's own setting, never a step's")
		}
		for _, w := range secretWords {
			if strings.Contains(up, w) {
				return fmt.Errorf("pass_env: %s %w (%s): it never reaches a step", n, ErrSecretEnv, w)
			}
		}
	}
	return nil
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
