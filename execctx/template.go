package execctx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// segment is one `{{ … }}` found in a template.
type segment struct {
	start, end int    // byte offsets of `{{` and just past `}}`
	inner      string // trimmed text between the braces
	path       []string
	raw        bool // {{ name | raw }}: spliced as shell syntax in a command line
}

// scanTemplate calls fn for every `{{ … }}` in s, with seg.path set when
// the inner text is a name or dotted path. An error from fn stops the scan.
// It runs in linear time: the next `}}` is searched for again only once the
// scan has passed it.
func scanTemplate(s string, fn func(seg segment) error) error {
	closeAt := -1
	for i := 0; i < len(s); {
		open := strings.Index(s[i:], "{{")
		if open < 0 {
			return nil
		}
		open += i
		if closeAt < open+2 {
			closeAt = strings.Index(s[open+2:], "}}")
			if closeAt < 0 {
				return fmt.Errorf("%w: unterminated {{ at byte %d: %q", ErrTemplate, open, clipRunes(s[open:], 30))
			}
			closeAt += open + 2
		}
		inner := strings.TrimSpace(s[open+2 : closeAt])
		seg := segment{start: open, end: closeAt + 2, inner: inner, path: parsePath(inner)}
		if name, filter, ok := strings.Cut(inner, "|"); ok && strings.TrimSpace(filter) == "raw" {
			if p := parsePath(strings.TrimSpace(name)); p != nil {
				seg.path, seg.raw = p, true
			}
		}
		if err := fn(seg); err != nil {
			return err
		}
		if seg.path != nil {
			i = seg.end
		} else {
			i = open + 1 // rescan: `{{{x}}}` holds `{{x}}` one byte later
		}
	}
	return nil
}

// parsePath splits "a.b.c" into identifiers, or returns nil, failing fast
// on the first character a path cannot hold. `end` is never a path, so Go
// templates' {{end}} stays literal.
func parsePath(inner string) []string {
	if inner == "" || inner == "end" {
		return nil
	}
	for i := 0; i < len(inner); i++ {
		if c := inner[i]; c != '.' && !isIdent(string(c)) && (c < '0' || c > '9') {
			return nil
		}
	}
	parts := strings.Split(inner, ".")
	for _, p := range parts {
		if !isIdent(p) {
			return nil
		}
	}
	return parts
}

// leadingIdent returns the identifier inner starts with.
func leadingIdent(inner string) string {
	end := 0
	for end < len(inner) {
		c := inner[end]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || end > 0 && '0' <= c && c <= '9' {
			end++
			continue
		}
		break
	}
	return inner[:end]
}

// TemplateVars lists the variables s references, each once, in order of
// first appearance (for `{{ last.stdout }}`: `last`).
//
// Templates: `{{name}}`, `{{ name }}` and `{{ name.key.key }}` (keys of map
// values, such as `{{ last.stdout }}`) inside a string are replaced by the
// variable's value: strings as they are, true/false, numbers in decimal,
// None as the empty string, lists and dicts as JSON.
//
//   - A name that is not set, or a key its map lacks, is an error
//     (ErrUnknownVariable): it never becomes an empty string.
//   - `{{` with no `}}` after it is an error (ErrTemplate).
//   - Text between `{{` and `}}` that is not a name or dotted path — Go
//     templates such as docker's `{{.Names}}` or `{{json .Config}}`,
//     `{{}}`, `{{end}}` — is kept literally, unless it starts with a set
//     variable's name (`{{ last['stdout'] }}`, `{{ x.strip() }}`): that is
//     an error, since it was meant as a reference.
//   - `{{{x}}}` renders as `{` + x + `}`.
//   - In a parameter that is a shell command line (execute_command's
//     command), `{{ name }}` becomes one shell-quoted word, quoted for
//     where it stands (renderShell); `{{ name | raw }}` splices the value
//     as shell syntax. Elsewhere the two are the same.
func TemplateVars(s string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	err := scanTemplate(s, func(seg segment) error {
		if seg.path != nil && !seen[seg.path[0]] {
			seen[seg.path[0]] = true
			names = append(names, seg.path[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// ParamVars lists the variables referenced by the strings in params,
// including nested maps and lists, each once, in sorted key order.
func ParamVars(params map[string]any) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	var walk func(path string, v any) error
	walk = func(path string, v any) error {
		switch x := v.(type) {
		case string:
			vs, err := TemplateVars(x)
			if err != nil {
				return fmt.Errorf("parameter %s: %w", path, err)
			}
			for _, n := range vs {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if err := walk(joinPath(path, k), x[k]); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
					return err
				}
			}
		case []string:
			for i, e := range x {
				if err := walk(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk("", params); err != nil {
		return nil, err
	}
	return names, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// render substitutes the references in s from vars.
func render(s string, vars map[string]any) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	last := 0
	err := scanTemplate(s, func(seg segment) error {
		if seg.path == nil {
			if name := leadingIdent(seg.inner); name != "" {
				if _, ok := vars[name]; ok {
					return fmt.Errorf("%w: {{ %s }}: only names and dotted paths like {{ %s.key }} can be used", ErrTemplate, clipRunes(seg.inner, 40), name)
				}
			}
			return nil
		}
		v, err := lookup(vars, seg.path)
		if err != nil {
			return err
		}
		b.WriteString(s[last:seg.start])
		b.WriteString(formatValue(v))
		last = seg.end
		return nil
	})
	if err != nil {
		return "", err
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// lookup resolves a dotted path in vars.
func lookup(vars map[string]any, path []string) (any, error) {
	v, ok := vars[path[0]]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownVariable, path[0])
	}
	for i, key := range path[1:] {
		m, ok := v.(map[string]any)
		where := strings.Join(path[:i+1], ".")
		if !ok {
			return nil, fmt.Errorf("%w %q: %s is a %s, not a dict", ErrUnknownVariable, strings.Join(path, "."), where, typeName(v))
		}
		if v, ok = m[key]; !ok {
			return nil, fmt.Errorf("%w %q: %s has no key %q", ErrUnknownVariable, strings.Join(path, "."), where, key)
		}
	}
	return v, nil
}

// formatValue renders a value into a template.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case []any, map[string]any:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return pyRepr(x)
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	return pyRepr(v)
}

// resolve renders every string in v, copying maps and lists; the
// top-level parameters named in shell are shell command lines
// (renderShell).
func resolve(path string, v any, vars map[string]any, shell ...string) (any, error) {
	switch x := v.(type) {
	case string:
		if path != "" && slices.Contains(shell, path) {
			out, err := renderShell(x, vars)
			if err != nil {
				return nil, fmt.Errorf("parameter %s: %w", path, err)
			}
			return out, nil
		}
		out, err := render(x, vars)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", path, err)
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			var r any
			var err error
			if path == "" {
				r, err = resolve(k, x[k], vars, shell...)
			} else {
				r, err = resolve(joinPath(path, k), x[k], vars)
			}
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := resolve(fmt.Sprintf("%s[%d]", path, i), e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			r, err := render(e, vars)
			if err != nil {
				return nil, fmt.Errorf("parameter %s[%d]: %w", path, i, err)
			}
			out[i] = r
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(x))
		for _, k := range sortedStringKeys(x) {
			r, err := render(x[k], vars)
			if err != nil {
				return nil, fmt.Errorf("parameter %s: %w", joinPath(path, k), err)
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
