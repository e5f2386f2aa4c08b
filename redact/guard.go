package redact

import (
	"regexp"
	"strings"
)

// The guard on learning. "Once seen, always hidden" hides a value the
// patterns or a harvested file named secret in every later text and
// shape, so a wrong value does lasting damage: a step that greps source
// code (`token := strings.TrimSpace(x)`, `"PASSWORD="+secret)`, a test's
// made-up secrets spanning lines) would teach the set identifiers and
// code, and later outputs would lose them everywhere. A Found value is
// learned only when it looks like a secret rather than code (learnable);
// and a set learns at most maxLearnPerText values from one text and
// MaxFound in all. A value not learned is still hidden where the
// patterns find it; only its other shapes and later occurrences are not.
// Known values (given to agent as secrets) are not guarded.

// MaxFound is the most Found values a set holds.
const MaxFound = 4096

// maxLearnPerText is the most values one text (an output, a harvested
// file) teaches the set: a text that would teach more is read as code or
// data, not settings.
const maxLearnPerText = 64

var (
	// letters joined by '_', '-' or '.', with no digit: a name in code
	// (redact.NewSet, bf.AskPass), an option (--token-file), a setting
	// (accept-new), not a secret
	plainIdentRE = regexp.MustCompile(`^-{0,2}[A-Za-z_][A-Za-z_-]*(?:\.[A-Za-z_-]+)*$`)
	// a line of a PEM body: base64
	pemLineRE = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
	// a call, index or composite literal: strings.TrimSpace(, map[string]
	callRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*[(\[{]`)
)

// codeOperators are in code and templates, hardly in a secret.
var codeOperators = []string{":=", "==", "!=", "&&", "||", "=>", "->", "+=", "$(", "${", "{{", "%s", "%v", "%d", "%q", `\n`, `\t`, `\"`}

// learnablePEMLine reports whether a line of a PEM block found may be
// learned: base64, as a key's body is (a block the patterns found in code,
// "-----BEGIN RSA PRIVATE KEY-----" in a string up to the end of the file,
// holds code).
func learnablePEMLine(line string) bool {
	return pemLineRE.MatchString(line) && !plainIdentRE.MatchString(line)
}

// learnable reports whether v, found under a secret name, may be learned:
// a private key's block, or one token (no white space) that does not read
// as code: no quote, comma, bracket or concatenation at either end, no
// code operator or escape, no call, and not a plain identifier.
func learnable(v string) bool {
	if strings.Contains(v, "-----BEGIN") || keyShapeRE.MatchString(v) { // a private key, a well-known key's shape
		return true
	}
	if strings.ContainsAny(v, " \t\n\r\f\v") {
		return false
	}
	const ends = "\"'`+,;:(){}[]"
	if strings.IndexByte(ends, v[0]) >= 0 || strings.IndexByte(ends, v[len(v)-1]) >= 0 {
		return false
	}
	if pemLineRE.MatchString(v) && strings.HasSuffix(v, "=") { // base64 with its padding ("==" is no operator there)
		return !plainIdentRE.MatchString(strings.TrimRight(v, "="))
	}
	for _, op := range codeOperators {
		if strings.Contains(v, op) {
			return false
		}
	}
	return !plainIdentRE.MatchString(v) && !callRE.MatchString(v)
}
