package execctx

import (
	"fmt"
	"strings"
)

// MaxNameLength bounds the length of a variable name.
const MaxNameLength = 64

// LastVar is the variable that always holds the latest step's result, a map
// with the keys stdout, stderr, exit_code and success.
const LastVar = "last"

// reserved maps each name that cannot be a variable to the reason.
var reserved = func() map[string]string {
	m := map[string]string{
		LastVar: "it always holds the latest step's result",
		"end":   "{{end}} is kept literally for Go templates (docker --format)",
		"json":  "json.loads() is a condition function",
	}
	for _, w := range strings.Fields(`False None True and as assert async await break class
		continue def del elif else except finally for from global if import in is lambda
		nonlocal not or pass raise return try while with yield`) {
		m[w] = "it is a Python keyword"
	}
	for _, w := range strings.Fields(`true false nil let matches contains startsWith endsWith`) {
		m[w] = "it is a condition keyword"
	}
	for name := range pyFuncs {
		m[name] = "it is a condition function"
	}
	return m
}()

// ValidateName checks that name can receive a step's output
// (save_output_as) or a --var value: an ASCII identifier — a letter or
// underscore, then letters, digits and underscores — that is not reserved.
// Reserved are `last`, Python keywords (True, False, None, and, not, …),
// the condition functions (len, int, str, json, …), `end`, and names starting
// with two underscores.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("%w %.20q…: longer than %d characters", ErrInvalidName, name, MaxNameLength)
	}
	if !isIdent(name) {
		return fmt.Errorf("%w %q: use a letter or underscore, then letters, digits or underscores", ErrInvalidName, name)
	}
	if why, ok := reserved[name]; ok {
		return fmt.Errorf("%w %q: the name is reserved: %s", ErrInvalidName, name, why)
	}
	if strings.HasPrefix(name, "__") {
		return fmt.Errorf("%w %q: names starting with __ are reserved", ErrInvalidName, name)
	}
	return nil
}

// isIdent reports whether s is a non-empty ASCII identifier.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
