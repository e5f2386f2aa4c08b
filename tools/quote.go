package tools

import "strings"

// Quote quotes s as one word for a POSIX shell: unchanged when it is made
// only of characters no shell treats specially, otherwise in single quotes,
// with each ' written as '\”. The result never expands, splits or globs.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isPlain(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isPlain(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_@%+=:,./-", r):
		default:
			return false
		}
	}
	return true
}

// QuoteArgv quotes every word of argv and joins them with spaces: a command
// line that the shell splits back into exactly argv.
func QuoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// quotePath quotes a path operand: a leading "~" or "~/" stays unquoted so
// the target's shell expands it to the home directory; the rest is quoted.
func quotePath(p string) string {
	switch {
	case p == "~":
		return "~"
	case strings.HasPrefix(p, "~/"):
		return "~/" + Quote(p[2:])
	}
	return Quote(p)
}

// operand makes a path operand safe from option parsing: one starting with
// "-" becomes "./-…", so it can never be read as an option.
func operand(p string) string {
	if strings.HasPrefix(p, "-") {
		return "./" + p
	}
	return p
}
