package redact

// SecretKey reports whether a parameter name says its value is a secret.
func SecretKey(name string) bool {
	return secretKeyRE.MatchString(name) || passKeyRE.MatchString(name)
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
