package ssh

import "strings"

// The line syntax of ssh_config, as OpenSSH 9.2 reads it.

// whitespace is OpenSSH's WHITESPACE.
const whitespace = " \t\r\n"

// strdelim returns the next token of s and what follows it, as OpenSSH's
// strdelim does: a token ends at whitespace, at one '=' or is a "quoted"
// string. more is false when nothing followed; ok is false for an
// unmatched quote.
func strdelim(s string) (tok, rest string, more, ok bool) {
	i := strings.IndexAny(s, whitespace+`"=`)
	if i < 0 {
		return s, "", false, true
	}
	if s[i] == '"' {
		t := s[:i] + s[i+1:]
		j := strings.IndexByte(t[i:], '"')
		if j < 0 {
			return "", "", false, false
		}
		return t[:i+j], strings.TrimLeft(t[i+j+1:], whitespace), true, true
	}
	equals := s[i] == '='
	rest = strings.TrimLeft(s[i+1:], whitespace)
	if !equals && strings.HasPrefix(rest, "=") {
		rest = strings.TrimLeft(rest[1:], whitespace)
	}
	return s[:i], rest, true, true
}

// argvSplit splits a line's arguments like OpenSSH's argv_split: blanks
// separate, '…' and "…" quote, backslash escapes quotes, backslash and
// blank, and '#' at the start of a word starts a comment. ok is false for
// an unterminated quote.
func argvSplit(s string) (args []string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			continue
		}
		if s[i] == '#' {
			break
		}
		var arg []byte
		var quote byte
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) && escapable(s[i+1], quote) {
				i++
				arg = append(arg, s[i])
			} else if quote == 0 && (c == ' ' || c == '\t') {
				break // end of the word
			} else if quote == 0 && (c == '"' || c == '\'') {
				quote = c
			} else if quote != 0 && c == quote {
				quote = 0
			} else {
				arg = append(arg, c)
			}
		}
		if quote != 0 {
			return nil, false
		}
		args = append(args, string(arg))
	}
	return args, true
}

// escapable reports whether a backslash before c escapes it.
func escapable(c, quote byte) bool {
	return c == '\'' || c == '"' || c == '\\' || (quote == 0 && c == ' ')
}

// asciiLower lowercases ASCII letters only, like C's tolower.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
