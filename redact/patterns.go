package redact

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
	// keyShapeWords are the literal starts of keyShapeRE's matches.
	keyShapeWords = []string{"AKIA", "ASIA", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"}
	// user:password@ in URLs.
	userinfoRE = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@'"]*:)[^\s@/'"]+@`)
	// URL query parameters holding credentials: ?key=, &api-key=,
	// ?access_token=, &sig= (the secret-named ones are also caught by
	// assignRE; "key" alone only here, after ? or &).
	queryRE = regexp.MustCompile(`(?i)([?&](?:[a-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|auth|signature)|sig|code)=)([^&#\s'"<>;|()\x60]+)`)
	// .netrc: "machine H login U password P" (on one line or several);
	// looked at only in text that has a netrc machine or default entry.
	netrcGateRE = regexp.MustCompile(`(?im)(?:^|[\s'"])(?:machine\s+\S+|default)\s+(?:login|password|passwd|account)\b|^\s*machine\s+\S+\s*$`)
	netrcRE     = regexp.MustCompile(`(?i)((?:^|\s|\\[nt])pass(?:word|wd)\s+)("[^"]*"|[^\s'";&|()<>\x60\\]+)`)
)

// assignWords are what each of secretKey's alternatives begins with.
var assignWords = []string{"passw", "secret", "token", "apikey", "api_key", "api-key", "authorization", "privatekey", "private_key", "private-key"}

// unquotedValue is a secret value written without quotes: it ends at
// white space, a quote or a shell metacharacter (token=x; echo … keeps ";").
const unquotedValue = "[^\\s'\";&|()<>\x60]+"

// String replaces secrets inside free text — command lines, output,
// error messages: PEM private keys, values of secret-named assignments,
// headers and options (PASSWORD=x, Authorization: Bearer x, --token x,
// "api_key": "x", STRIPE_KEY=x, AWS_REGION=x), bearer tokens, well-known
// key shapes, URL passwords and credential query parameters (?key=x), and
// .netrc passwords — each by Redacted.
//
// Each pattern runs only on text that holds the words it needs (redactGate):
// most text (statuses, tool names, ordinary output) holds none, and the
// patterns' backtracking was most of the cost of every event a run reports.
func String(s string) string {
	if s == "" {
		return s
	}
	return patternMemo.answer(s, func(s string) string { return redactGated(s, newRedactGate(s), plainMark) })
}

// Named is String with each secret replaced by
// "[REDACTED:NAME]", NAME saying what it was (DB_PASSWORD, PRIVATE_KEY,
// URL_PASSWORD, …), for text sent to a model: it learns that a value was
// withheld and which. names lists the NAMEs in order of appearance, each
// once.
func Named(s string) (out string, names []string) {
	if s == "" {
		return s, nil
	}
	mark := func(name, _ string) string {
		name = MarkName(name)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return NamedMark(name)
	}
	return redactGated(s, newRedactGate(s), mark), names
}

// NamedMark is what Named puts in place of a secret called name.
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

func plainMark(string, string) string { return Redacted }

// redactGated is String where g says which patterns may match and
// mark gives the replacement of a secret called name whose value is value.
func redactGated(s string, g redactGate, mark func(name, value string) string) string {
	if g.has("-----BEGIN") {
		s = pemRE.ReplaceAllStringFunc(s, func(m string) string { return mark("PRIVATE_KEY", m) })
	}
	values := func(re *regexp.Regexp, suffix string, name func(string) string) func(string) string {
		return func(s string) string { return replaceValues(s, re, suffix, mark, name) }
	}
	gated := func(gate lineGate, f func(string) string) {
		if gate.fold && g.hasFold(gate.words...) || !gate.fold && g.has(gate.words...) && (gate.also == nil || g.all || g.whole || g.big() || gate.also(g.s)) {
			s = g.byLines(s, gate, f)
		}
	}
	// each pattern's words as its matches hold them: "api" and "key"
	// alone are in one base64 line of 40, "_key" and "api_key" hardly
	gated(assignWords1, values(assignRE, "", keyName))
	gated(assignWords2, values(keyEndRE, "", keyName))
	gated(assignWords3, values(passRE, "", keyName))
	gated(assignWords4, values(pwdRE, "", keyName))
	gated(foldWords("bearer"), values(bearerRE, "", fixedName("BEARER_TOKEN")))
	gated(words(keyShapeWords...), func(s string) string {
		return keyShapeRE.ReplaceAllStringFunc(s, func(m string) string { return mark(shapeName(m), m) })
	})
	gated(words("://"), values(userinfoRE, "@", fixedName("URL_PASSWORD")))
	gated(lineGate{words: []string{"?", "&"}, also: func(line string) bool { return strings.Contains(line, "=") }}, values(queryRE, "", keyName))
	if g.hasFold("machine", "default") && g.netrc(s) {
		s = replaceValues(s, netrcRE, "", mark, fixedName("NETRC_PASSWORD"))
	}
	gated(words("-p"), func(s string) string { return redactAttachedP(s, mark) })
	gated(words("mysql", "mariadb", "sshpass", "curl", "htpasswd"), func(s string) string {
		return redactCommandSecrets(s, func(v string) string { return mark("PASSWORD", v) })
	})
	return s
}

// netrcAtRE is netrcGateRE where a netrc word ("machine", "default")
// starts; netrcLineRE its other half, at a "machine" that only white
// space comes before on its line.
var (
	netrcAtRE   = regexp.MustCompile(`\A(?i)(?:machine\s+\S+|default)\s+(?:login|password|passwd|account)\b`)
	netrcLineRE = regexp.MustCompile(`\A(?im)machine\s+\S+\s*$`)
)

// netrc reports whether s (the text as the patterns before left it)
// matches netrcGateRE: for a large text, by trying it where its words are
// only.
func (g redactGate) netrc(s string) bool {
	if g.whole || !g.big() {
		return netrcGateRE.MatchString(s)
	}
	sc := g.scanOf(s)
	for _, w := range []string{"machine", "default"} {
		for _, from := range sc.linesOf(gateID(w, true)) {
			line := s[from:]
			if to := strings.IndexByte(line, '\n'); to >= 0 {
				line = line[:to]
			}
			for at := 0; ; {
				i := strings.Index(asciiLower(line[at:]), w)
				if i < 0 {
					break
				}
				p := from + at + i
				if p == from || strings.IndexByte(" \t\f\r'\"", s[p-1]) >= 0 { // (?m)^ or [\s'"]
					if netrcAtRE.MatchString(s[p:]) {
						return true
					}
				}
				if strings.TrimLeft(s[from:p], " \t\r\f") == "" && w == "machine" && netrcLineRE.MatchString(s[p:]) {
					return true
				}
				at += i + len(w)
			}
		}
	}
	return false
}

// A lineGate names what a pattern cannot match without on the line its
// match starts: one of words (in any case when fold), and, when also is
// set, the line passing also. When confirm is set, byLines passes a line
// of a large text to the pattern only if confirm(text, line's start) too.
type lineGate struct {
	words   []string
	fold    bool
	also    func(line string) bool
	confirm func(s string, from int) bool
}

// The gates of the patterns of assignments (assignRE, keyEndRE, passRE,
// pwdRE), each confirmed by assignAt: on prose and code, most lines that
// say password or token assign none, and the regular expressions cost
// about a microsecond a byte they are given.
var (
	assignWords1 = assignGate(assignWords...)
	assignWords2 = assignGate("_key", "-key", ".key", "aws_")
	assignWords3 = assignGate("pass")
	assignWords4 = assignGate("_pwd", "-pwd", ".pwd")
)

func assignGate(ws ...string) lineGate {
	return lineGate{words: ws, fold: true, confirm: func(s string, from int) bool { return assignAt(s, from, ws) }}
}

// assignAt reports whether the line of s starting at from holds one of
// words (lower case; in any case in s) as an assignment's or an option's
// name can: after the word and the name bytes after it, an optional
// quote, white space (over lines too) and ':' or '=' (NAME=, "name":);
// or white space after the name bytes, with a '-' in the name bytes
// before the word (--token x, -pass x). Every match of the patterns it
// confirms for starts so (a superset: it does not look at the value). A
// run longer than assignLook is taken as a match.
func assignAt(s string, from int, words []string) bool {
	end := strings.IndexByte(s[from:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += from
	}
	line := asciiLower(s[from:end])
	for _, w := range words {
		for at := 0; ; {
			i := strings.Index(line[at:], w)
			if i < 0 {
				break
			}
			p := from + at + i
			if assignAfter(s, p, p+len(w)) {
				return true
			}
			at += i + 1
		}
	}
	return false
}

// assignLook bounds assignAt's look at a run of name bytes or white space.
const assignLook = 256

// assignAfter is assignAt for a word at s[p:e].
func assignAfter(s string, p, e int) bool {
	isName := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
	}
	// an option: --name value
	k := e
	for k < len(s) && isName(s[k]) && s[k] != '.' {
		if k++; k-e > assignLook {
			return true
		}
	}
	if k < len(s) && isSpace(s[k]) {
		for b := p - 1; b >= 0 && isName(s[b]) && s[b] != '.'; b-- {
			if s[b] == '-' || p-b > assignLook {
				return true
			}
		}
	}
	// NAME=value, NAME: value, "name": value
	for k = e; k < len(s) && isName(s[k]); k++ {
		if k-e > assignLook {
			return true
		}
	}
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
	}
	for w := k; k < len(s) && isSpace(s[k]); k++ {
		if k-w > assignLook {
			return true
		}
	}
	return k < len(s) && (s[k] == ':' || s[k] == '=')
}

func words(ws ...string) lineGate     { return lineGate{words: ws} }
func foldWords(ws ...string) lineGate { return lineGate{words: ws, fold: true} }

// gateTail is how many lines after a gated line a pattern's match may
// reach (a value on the next line, a quoted value over a few).
const gateTail = 4

// byLines applies f to the parts of s a pattern can match in: each
// line gate passes, with the gateTail lines after it. Every match holds a
// gate word on the line it starts (names, option dashes and schemes hold
// no newline), so only a match reaching further than gateTail lines (a
// quoted value longer than that) is cut at its part's end. The regular
// expressions cost most of redacting a large output; most of its lines
// hold none of their words, and the words are looked for in the whole
// text at once (scanGates), not line by line. A line holding ſ or the
// Kelvin sign always passes ((?i) folds them to s and k); text mostly
// gated goes to f whole. A line gate's confirm drops more lines.
func (g redactGate) byLines(s string, gate lineGate, f func(string) string) string {
	if g.whole || len(s) < 4<<10 {
		return f(s)
	}
	sc := g.scanOf(s)
	lineOf := func(from int) int {
		to := strings.IndexByte(s[from:], '\n')
		if to < 0 {
			return len(s)
		}
		return from + to + 1
	}
	// the starts of the lines that pass, in any order
	var starts []int
	for _, w := range gate.words {
		for _, from := range sc.linesOf(gateID(w, gate.fold)) {
			if (gate.also == nil || gate.also(s[from:lineOf(from)])) && (gate.confirm == nil || gate.confirm(s, from)) {
				starts = append(starts, from)
			}
		}
	}
	if g.all { // lines holding a rune (?i) folds to an ASCII letter
		starts = append(starts, sc.folded...)
	}
	if len(starts) == 0 {
		return s
	}
	slices.Sort(starts)
	type part struct{ from, to int }
	var parts []part
	total := 0
	for _, from := range slices.Compact(starts) {
		// the line and gateTail lines after it
		to := from
		for k := 0; k <= gateTail && to < len(s); k++ {
			if j := strings.IndexByte(s[to:], '\n'); j >= 0 {
				to += j + 1
			} else {
				to = len(s)
			}
		}
		if n := len(parts); n > 0 && from <= parts[n-1].to {
			total += to - parts[n-1].to
			parts[n-1].to = max(parts[n-1].to, to)
			continue
		}
		parts = append(parts, part{from, to})
		total += to - from
	}
	if total > len(s)*3/4 {
		return f(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	var edits []edit
	for _, p := range parts {
		b.WriteString(s[last:p.from])
		in := s[p.from:p.to]
		out := f(in)
		if out != in {
			edits = append(edits, edit{from: p.from, to: p.to, newFrom: b.Len(), sub: scanGates(out)})
		}
		b.WriteString(out)
		last = p.to
	}
	b.WriteString(s[last:])
	if len(edits) == 0 {
		return s
	}
	out := b.String()
	if g.cur != nil {
		g.cur.scan = sc.splice(out, edits)
	}
	return out
}

// replaceValues replaces each match of re in s but its group 1 (what
// comes before the value) by mark(name(group 1)) and suffix.
func replaceValues(s string, re *regexp.Regexp, suffix string, mark func(name, value string) string, name func(string) string) string {
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
		b.WriteString(mark(name(prefix), unquote(strings.TrimSuffix(s[m[3]:m[1]], suffix))))
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

// redactGate says whether a text holds the words a pattern of String
// cannot match without. It looks at the text as given: a replacement adds
// none of those words, so a word absent before is absent after. Text
// holding one of foldRunes passes every gate: (?i) folds them to ASCII
// letters (the Kelvin sign is k, ſ is s), and a gate word may be spelled
// with them; no other rune folds to an ASCII letter.
type redactGate struct {
	s     string
	all   bool
	whole bool // no line gating (byLines): tests' reference
	// scan is where s holds the gate words; cur where the text as the
	// patterns left it does (byLines keeps it up to date; scanOf scans a
	// text again otherwise).
	scan *gateScan
	cur  *curScan
}

// curScan is the scan of the text the patterns made last.
type curScan struct{ scan *gateScan }

func newRedactGate(s string) redactGate { return gateOf(s, nil) }

// gateOf is newRedactGate with s's gate words found already by sc (nil:
// scanned now).
func gateOf(s string, sc *gateScan) redactGate {
	if sc == nil || sc.src != s {
		sc = scanGates(s)
	}
	return redactGate{s: s, all: len(sc.folded) > 0, scan: sc, cur: &curScan{sc}}
}

// big reports whether the text is gated line by line.
func (g redactGate) big() bool { return len(g.s) >= 4<<10 }

// scanOf is where s (the gate's text, or what the patterns made of it)
// holds the gate words.
func (g redactGate) scanOf(s string) *gateScan {
	if g.scan != nil && g.scan.src == s {
		return g.scan
	}
	if g.cur != nil && g.cur.scan != nil && g.cur.scan.src == s {
		return g.cur.scan
	}
	sc := scanGates(s)
	if g.cur != nil {
		g.cur.scan = sc
	}
	return sc
}

// has reports whether the text holds one of words, as written.
func (g redactGate) has(words ...string) bool {
	return g.all || g.scan.has(false, words)
}

// hasFold reports whether the text holds one of words (lower case) in any
// case.
func (g redactGate) hasFold(words ...string) bool {
	return g.all || g.scan.has(true, words)
}

// unquote is v without the quotes around it, if it has them.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// attachedPRE is an option -pVALUE, as a process listing shows a client
// given its password that way (mysql -pS3cret, and its like).
var attachedPRE = regexp.MustCompile(`(?:^|[\s'"])-p([^\s'";&|()<>\x60=]{6,})(?:$|[\s'";&|()<>\x60])`)

// redactAttachedP replaces the value of each -pVALUE that looks like a
// password: at least 6 bytes, a letter and a digit or a symbol in it, no
// '=' (so -pthread, -pedantic, -p8080:80 and -p127.0.0.1:80:80 stay).
func redactAttachedP(s string, mark func(name, value string) string) string {
	ms := attachedPRE.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		v := s[m[2]:m[3]]
		if !passwordLike(v) || strings.HasPrefix(v, "[REDACTED") || strings.HasPrefix(v, "rint") { // find -print0
			continue
		}
		b.WriteString(s[last:m[2]])
		b.WriteString(mark("PASSWORD", v))
		last = m[3]
	}
	b.WriteString(s[last:])
	return b.String()
}

// passwordLike reports whether v has a letter and a digit or symbol.
func passwordLike(v string) bool {
	letter, other := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		default:
			other = true
		}
	}
	return letter && other
}

// asciiLower is s with A-Z lowered, every other byte as it is (offsets
// kept).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
