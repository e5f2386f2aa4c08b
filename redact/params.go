package redact

import "strings"

// SecretKey reports whether a parameter name says its value is a secret.
// An ASCII name is looked at without the regular expressions (every
// environment variable is, at start-up: ~4 µs a name by them, 0.1 µs
// this way); one with another byte goes through them, which fold ſ and
// the Kelvin sign.
func SecretKey(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return secretKeyRE.MatchString(name) || passKeyRE.MatchString(name)
		}
	}
	var buf [64]byte
	l := name
	if len(name) <= len(buf) {
		for i := 0; i < len(name); i++ {
			c := name[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		l = string(buf[:len(name)])
	} else {
		l = strings.ToLower(name)
	}
	return secretKeyASCII(l)
}

// secretKeyWords are secretKey's words, spelled out.
var secretKeyWords = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key",
	"authorization", "privatekey", "private_key", "private-key"}

// secretKeyASCII is SecretKey for a name in lower-case ASCII: secretKeyRE
// and passKeyRE.
func secretKeyASCII(l string) bool {
	for _, w := range secretKeyWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	sep := func(i int) bool { return l[i] == '_' || l[i] == '.' || l[i] == '-' }
	for _, suf := range []string{"pass", "passphrase"} {
		if i := len(l) - len(suf); strings.HasSuffix(l, suf) && (i == 0 || sep(i-1)) {
			return true
		}
	}
	return strings.HasSuffix(l, "pwd") && len(l) > 3 && sep(len(l)-4)
}

// Redact returns a copy of params with secrets replaced by Redacted: the
// whole value of a key that names a secret (password, token, api_key,
// authorization, …), and secrets inside every other string (see
// String), through nested maps and slices. Other values (numbers,
// booleans) are kept. The input is never modified.
func Params(params map[string]any) map[string]any {
	return paramsWith(params, String)
}

// paramsWith is Params with str in place of String.
func paramsWith(params map[string]any, str func(string) string) map[string]any {
	if params == nil {
		return nil
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		if v != nil && SecretKey(k) {
			out[k] = Redacted
			continue
		}
		out[k] = redactValue(v, str)
	}
	return out
}

func redactValue(v any, str func(string) string) any {
	switch v := v.(type) {
	case string:
		return str(v)
	case []byte:
		return str(string(v))
	case map[string]any:
		return paramsWith(v, str)
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, s := range v {
			if SecretKey(k) {
				out[k] = Redacted
			} else {
				out[k] = str(s)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = redactValue(x, str)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = str(s)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(v))
		for k, x := range v {
			if ks, ok := k.(string); ok && x != nil && SecretKey(ks) {
				out[k] = Redacted
			} else {
				out[k] = redactValue(x, str)
			}
		}
		return out
	}
	return v
}
