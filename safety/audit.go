package safety

import (
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// secretKey matches parameter names and inline names (NAME=, "name":,
// Name:, --name) whose value is a secret.
const secretKey = `(?:password|passwd|secret|token|api[_-]?key|apikey|authorization|private[_-]?key)`

var (
	secretKeyRE = regexp.MustCompile(`(?i)` + secretKey)
	// A PEM private key, up to its END line or the end of the text.
	pemRE = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)
	// NAME=value, NAME: value, "name": "value" and --name value, where NAME
	// contains a secret key word; an auth scheme before the value is kept.
	assignRE = regexp.MustCompile(`(?i)((?:[A-Za-z0-9_.-]*` + secretKey + `[A-Za-z0-9_.-]*["']?\s*[:=]|-{1,2}[A-Za-z0-9_-]*` +
		secretKey + `[A-Za-z0-9_-]*\s)\s*(?:(?:bearer|basic|token)\s+)?)('[^']*'|"(?:[^"\\]|\\.)*"|` + unquotedValue + `)`)
	// NAME=value, "name": value and -pass value where NAME is "pass" or
	// ends in it as a word (DB_PASS=x, smtp.pass=x; not bypass=x). Only "="
	// and quoted JSON keys: "PASS: TestX" in test output is not a secret.
	passRE    = regexp.MustCompile(`(?i)((?:\b(?:[A-Za-z0-9]+[_.-])*pass(?:phrase)?(?:[_.-][A-Za-z0-9_.-]*)?["']?\s*=|"(?:[A-Za-z0-9]+[_.-])*pass(?:phrase)?"\s*:|(?:^|\s)-{1,2}pass(?:phrase)?\s+)\s*)('[^']*'|"(?:[^"\\]|\\.)*"|` + unquotedValue + `)`)
	passKeyRE = regexp.MustCompile(`(?i)(?:^|[_.-])pass(?:phrase)?$|[_.-]pwd$`)
	// pwdRE: NAME_PWD=value (MYSQL_PWD…); a bare PWD= is the working directory.
	pwdRE = regexp.MustCompile(`(?i)(\b(?:[A-Za-z0-9]+[_.-])+pwd["']?\s*=\s*)('[^']*'|"(?:[^"\\]|\\.)*"|` + unquotedValue + `)`)
	// NAME=value and NAME: value where NAME ends in _KEY (STRIPE_KEY,
	// secret_key_base is assignRE's) or starts with AWS_ (AWS_REGION too:
	// issue 14 names AWS_* whole).
	keyEndRE = regexp.MustCompile(`(?i)(\b(?:aws_[A-Za-z0-9_.-]*|[A-Za-z0-9_.-]*[_.-]key)["']?\s*[:=]\s*)('[^']*'|"(?:[^"\\]|\\.)*"|` + unquotedValue + `)`)
	// "Bearer xyz" anywhere, e.g. in output.
	bearerRE = regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`)
	// Well-known key shapes: AWS access key ids, OpenAI/Anthropic-style
	// sk- keys, GitHub and Slack tokens.
	keyShapeRE = regexp.MustCompile(`\b(?:(?:AKIA|ASIA)[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,})`)
	// user:password@ in URLs.
	userinfoRE = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@'"]+:)[^\s@/'"]+@`)
	// URL query parameters holding credentials: ?key=, &api-key=,
	// ?access_token=, &sig= (the secret-named ones are also caught by
	// assignRE; "key" alone only here, after ? or &).
	queryRE = regexp.MustCompile(`(?i)([?&](?:[a-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|auth|signature)|sig|code)=)([^&#\s'"<>;|()\x60]+)`)
	// .netrc: "machine H login U password P" (on one line or several);
	// looked at only in text that has a netrc machine or default entry.
	netrcGateRE = regexp.MustCompile(`(?im)(?:^|[\s'"])(?:machine\s+\S+|default)\s+(?:login|password|passwd|account)\b|^\s*machine\s+\S+\s*$`)
	netrcRE     = regexp.MustCompile(`(?i)((?:^|\s|\\[nt])pass(?:word|wd)\s+)("[^"]*"|[^\s'";&|()<>\x60\\]+)`)
)

// unquotedValue is a secret value written without quotes: it ends at
// white space, a quote or a shell metacharacter (token=x; echo … keeps ";").
const unquotedValue = "[^\\s'\";&|()<>\x60]+"

// RedactString replaces secrets inside free text — command lines, output,
// error messages: PEM private keys, values of secret-named assignments,
// headers and options (PASSWORD=x, Authorization: Bearer x, --token x,
// "api_key": "x", STRIPE_KEY=x, AWS_REGION=x), bearer tokens, well-known
// key shapes, URL passwords and credential query parameters (?key=x), and
// .netrc passwords — each by Redacted.
//
// Each pattern runs only on text that holds the words it needs (redactGate):
// most text (statuses, tool names, ordinary output) holds none, and the
// patterns' backtracking was most of the cost of every event a run reports.
func RedactString(s string) string {
	if s == "" {
		return s
	}
	return redactGated(s, newRedactGate(s), plainMark)
}

// RedactNamed is RedactString with each secret replaced by
// "[REDACTED:NAME]", NAME saying what it was (DB_PASSWORD, PRIVATE_KEY,
// URL_PASSWORD, …), for text sent to a model: it learns that a value was
// withheld and which. names lists the NAMEs in order of appearance, each
// once.
func RedactNamed(s string) (out string, names []string) {
	if s == "" {
		return s, nil
	}
	mark := func(name string) string {
		name = MarkName(name)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return NamedMark(name)
	}
	return redactGated(s, newRedactGate(s), mark), names
}

// NamedMark is what RedactNamed puts in place of a secret called name.
func NamedMark(name string) string { return "[REDACTED:" + name + "]" }

// MarkName is name as NamedMark shows it: upper case, letters, digits and
// "_" only, at most 64 bytes ("SECRET" when nothing is left).
func MarkName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name) && len(b) < 64; i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z':
			b = append(b, c-'a'+'A')
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			b = append(b, c)
		case c == '-' || c == '.':
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return "SECRET"
	}
	return string(b)
}

func plainMark(string) string { return Redacted }

// redactGated is RedactString where g says which patterns may match and
// mark gives the replacement of a secret called name.
func redactGated(s string, g redactGate, mark func(name string) string) string {
	if g.has("-----BEGIN") {
		s = pemRE.ReplaceAllStringFunc(s, func(string) string { return mark("PRIVATE_KEY") })
	}
	if g.hasFold("passw", "secret", "token", "api", "authorization", "private") {
		s = replaceValues(s, assignRE, "", mark, keyName)
	}
	if g.hasFold("key", "aws_") {
		s = replaceValues(s, keyEndRE, "", mark, keyName)
	}
	if g.hasFold("pass") {
		s = replaceValues(s, passRE, "", mark, keyName)
	}
	if g.hasFold("pwd") {
		s = replaceValues(s, pwdRE, "", mark, keyName)
	}
	if g.hasFold("bearer") {
		s = replaceValues(s, bearerRE, "", mark, fixedName("BEARER_TOKEN"))
	}
	if g.has("AKIA", "ASIA", "sk-", "gh", "xox") {
		s = keyShapeRE.ReplaceAllStringFunc(s, func(m string) string { return mark(shapeName(m)) })
	}
	if g.has("://") {
		s = replaceValues(s, userinfoRE, "@", mark, fixedName("URL_PASSWORD"))
	}
	if g.has("=") && g.has("?", "&") {
		s = replaceValues(s, queryRE, "", mark, keyName)
	}
	if g.hasFold("machine", "default") && netrcGateRE.MatchString(s) {
		s = replaceValues(s, netrcRE, "", mark, fixedName("NETRC_PASSWORD"))
	}
	if g.has("mysql", "mariadb", "sshpass", "curl", "htpasswd") {
		s = redactCommandSecrets(s, mark("PASSWORD"))
	}
	return s
}

// replaceValues replaces each match of re in s but its group 1 (what
// comes before the value) by mark(name(group 1)) and suffix.
func replaceValues(s string, re *regexp.Regexp, suffix string, mark func(string) string, name func(string) string) string {
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		prefix := s[m[2]:m[3]]
		if strings.HasPrefix(s[m[3]:m[1]], "[REDACTED") { // replaced already (a hidden variable's value)
			continue
		}
		b.WriteString(s[last:m[3]])
		b.WriteString(mark(name(prefix)))
		b.WriteString(suffix)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// keyName is the name in an assignment's prefix (`DB_PASSWORD=`,
// `"api_key": `, `--token `, `?access_token=`, `Authorization: Bearer `):
// its first run of name characters.
func keyName(prefix string) string {
	i := strings.IndexFunc(prefix, func(r rune) bool { return r != '-' && isNameRune(r) })
	if i < 0 {
		return "SECRET"
	}
	j := strings.IndexFunc(prefix[i:], func(r rune) bool { return !isNameRune(r) })
	if j < 0 {
		return prefix[i:]
	}
	return prefix[i : i+j]
}

func isNameRune(r rune) bool {
	return r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func fixedName(name string) func(string) string { return func(string) string { return name } }

// shapeName names a well-known key shape.
func shapeName(key string) string {
	switch {
	case strings.HasPrefix(key, "AKIA"), strings.HasPrefix(key, "ASIA"):
		return "AWS_ACCESS_KEY_ID"
	case strings.HasPrefix(key, "sk-"):
		return "API_KEY"
	case strings.HasPrefix(key, "gh"):
		return "GITHUB_TOKEN"
	}
	return "SLACK_TOKEN"
}

// redactGate says whether a text holds the words a pattern of RedactString
// cannot match without. It looks at the text as given: a replacement adds
// none of those words, so a word absent before is absent after. Text that
// is not ASCII passes every gate: (?i) folds non-ASCII letters (the Kelvin
// sign is k, ſ is s) that a lower-cased comparison would miss.
type redactGate struct {
	s, lower string
	all      bool
}

func newRedactGate(s string) redactGate {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return redactGate{all: true}
		}
	}
	return redactGate{s: s, lower: strings.ToLower(s)}
}

// has reports whether the text holds one of words, as written.
func (g redactGate) has(words ...string) bool {
	return g.all || containsAny(g.s, words)
}

// hasFold reports whether the text holds one of words (lower case) in any
// case.
func (g redactGate) hasFold(words ...string) bool {
	return g.all || containsAny(g.lower, words)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

var (
	// Commands that take a password in an option or operand of their own:
	// mysql -pSECRET, sshpass -p SECRET, curl -u USER:SECRET, htpasswd -b
	// FILE USER SECRET. Only these commands' words are looked at, so
	// "ssh -p 22" and "sort -u" stay.
	secretCmdRE = regexp.MustCompile(`(?:^|[\s;&|(\x60/])(mysql[a-z]*|mariadb[a-z-]*|sshpass|curl|htpasswd)\s`)
)

// redactCommandSecrets replaces the passwords that secretCmdRE's commands
// take as words by mark.
func redactCommandSecrets(s, mark string) string {
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
		b.WriteString(mark)
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

// SecretKey reports whether a parameter name says its value is a secret.
func SecretKey(name string) bool {
	return secretKeyRE.MatchString(name) || passKeyRE.MatchString(name)
}

// Redact returns a copy of params with secrets replaced by Redacted: the
// whole value of a key that names a secret (password, token, api_key,
// authorization, …), and secrets inside every other string (see
// RedactString), through nested maps and slices. Other values (numbers,
// booleans) are kept. The input is never modified.
func Redact(params map[string]any) map[string]any {
	if params == nil {
		return nil
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		if v != nil && SecretKey(k) {
			out[k] = Redacted
			continue
		}
		out[k] = redactValue(v)
	}
	return out
}

func redactValue(v any) any {
	switch v := v.(type) {
	case string:
		return RedactString(v)
	case []byte:
		return RedactString(string(v))
	case map[string]any:
		return Redact(v)
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, s := range v {
			if SecretKey(k) {
				out[k] = Redacted
			} else {
				out[k] = RedactString(s)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = redactValue(x)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = RedactString(s)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(v))
		for k, x := range v {
			if ks, ok := k.(string); ok && x != nil && SecretKey(ks) {
				out[k] = Redacted
			} else {
				out[k] = redactValue(x)
			}
		}
		return out
	}
	return v
}
