package redact

import (
	"regexp"
	"strings"
)

var (
	// Commands that take a password in an option or operand of their own:
	// mysql -pSECRET, sshpass -p SECRET, curl -u USER:SECRET, htpasswd -b
	// FILE USER SECRET. Only these commands' words are looked at, so
	// "ssh -p 22" and "sort -u" stay.
	secretCmdRE = regexp.MustCompile(`(?:^|[\s;&|(\x60/])(mysql[a-z]*|mariadb[a-z-]*|sshpass|curl|htpasswd)\s`)
)

// redactCommandSecrets replaces the passwords that secretCmdRE's commands
// take as words by mark.
func redactCommandSecrets(s string, mark func(value string) string) string {
	var spans [][2]int // sorted, as commands are found left to right
	for _, m := range secretCmdRE.FindAllStringSubmatchIndex(s, -1) {
		name, at := s[m[2]:m[3]], m[3]
		words, offs := shellWords(s, at, 64)
		for _, sec := range commandSecrets(name, words) {
			from := offs[sec.word] + sec.from
			spans = append(spans, [2]int{from, from + sec.n})
		}
	}
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[0] < last || sp[0] >= sp[1] {
			continue
		}
		b.WriteString(s[last:sp[0]])
		b.WriteString(mark(s[sp[0]:sp[1]]))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// shellWords splits up to max shell words off s from byte at, quotes kept,
// stopping at an operator or newline that ends the command; offs are where
// the words start.
func shellWords(s string, at, max int) (words []string, offs []int) {
	i := at
	for len(words) < max {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || strings.IndexByte(";&|()<>`\n", s[i]) >= 0 {
			return
		}
		start := i
		for i < len(s) && strings.IndexByte(" \t;&|()<>`\n", s[i]) < 0 {
			switch s[i] {
			case '\'':
				if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
					i += j + 1
				} else {
					i = len(s) - 1
				}
			case '"':
				for i++; i < len(s) && s[i] != '"'; i++ {
					if s[i] == '\\' {
						i++
					}
				}
				i = min(i, len(s)-1)
			case '\\':
				i = min(i+1, len(s)-1)
			}
			i++
		}
		words, offs = append(words, s[start:i]), append(offs, start)
	}
	return
}

// secretAt is a secret inside a command's word: bytes [from, from+n) of
// word number word.
type secretAt struct{ word, from, n int }

// commandSecrets finds the passwords among a command's words.
func commandSecrets(name string, words []string) []secretAt {
	var out []secretAt
	whole := func(i, from int) {
		if i < len(words) && len(words[i]) > from {
			out = append(out, secretAt{i, from, len(words[i]) - from})
		}
	}
	switch {
	case strings.HasPrefix(name, "mysql"), strings.HasPrefix(name, "mariadb"):
		for i, w := range words { // -pSECRET; a bare -p prompts, and --password=x is assignRE's
			if strings.HasPrefix(w, "-p") {
				whole(i, 2)
			}
		}
	case name == "sshpass":
		for i := 0; i < len(words) && strings.HasPrefix(words[i], "-"); i++ { // up to the command it runs
			switch w := words[i]; {
			case w == "-p":
				whole(i+1, 0)
				i++
			case strings.HasPrefix(w, "-p"):
				whole(i, 2)
			case w == "-f" || w == "-d" || w == "-P":
				i++
			}
		}
	case name == "curl":
		for i, w := range words {
			switch {
			case w == "-u" || w == "--user" || w == "-U" || w == "--proxy-user":
				if i+1 < len(words) {
					out = append(out, afterColon(i+1, words[i+1], 0)...)
				}
			case strings.HasPrefix(w, "--user=") || strings.HasPrefix(w, "--proxy-user="):
				out = append(out, afterColon(i, w, strings.IndexByte(w, '=')+1)...)
			case len(w) > 2 && (w[:2] == "-u" || w[:2] == "-U"):
				out = append(out, afterColon(i, w, 2)...)
			}
		}
	case name == "htpasswd":
		batch, noFile, operands := false, false, []int{}
		for i := 0; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "-C" || w == "-r":
				i++
			case len(w) > 1 && w[0] == '-':
				batch = batch || strings.Contains(w, "b")
				noFile = noFile || strings.Contains(w, "n")
			default:
				operands = append(operands, i)
			}
		}
		pw := 2 // htpasswd -b FILE USER PASSWORD; -n has no FILE
		if noFile {
			pw = 1
		}
		if batch && len(operands) > pw {
			whole(operands[pw], 0)
		}
	}
	return out
}

// afterColon is the password of a USER:PASSWORD value starting at byte
// from of word i, without its closing quote.
func afterColon(i int, w string, from int) []secretAt {
	c := strings.IndexByte(w[from:], ':')
	if c < 0 {
		return nil // curl prompts for the password
	}
	start, end := from+c+1, len(w)
	if q := w[from]; (q == '\'' || q == '"') && end > start && w[end-1] == q {
		end--
	}
	if end <= start {
		return nil
	}
	return []secretAt{{i, start, end - start}}
}
