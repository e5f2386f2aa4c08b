package execctx

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// strMethods are the str methods a condition may call. contains() is not
// Python but the design lists it, so `x.contains('y')` means 'y' in x.
var strMethods = map[string]func(s string, a []any) (any, error){
	"strip":  func(s string, a []any) (any, error) { return stripper("strip", s, a, strings.Trim, strings.TrimSpace) },
	"lstrip": func(s string, a []any) (any, error) { return stripper("lstrip", s, a, strings.TrimLeft, trimLeftSpace) },
	"rstrip": func(s string, a []any) (any, error) {
		return stripper("rstrip", s, a, strings.TrimRight, trimRightSpace)
	},
	"lower": func(s string, a []any) (any, error) { return noArgs("lower", a, strings.ToLower(s)) },
	"upper": func(s string, a []any) (any, error) { return noArgs("upper", a, strings.ToUpper(s)) },
	"startswith": func(s string, a []any) (any, error) {
		return affix("startswith", s, a, strings.HasPrefix)
	},
	"endswith": func(s string, a []any) (any, error) {
		return affix("endswith", s, a, strings.HasSuffix)
	},
	"contains": func(s string, a []any) (any, error) {
		sub, err := strArg("contains", a)
		if err != nil {
			return nil, err
		}
		return strings.Contains(s, sub), nil
	},
	"find": func(s string, a []any) (any, error) {
		sub, err := strArg("find", a)
		if err != nil {
			return nil, err
		}
		i := strings.Index(s, sub)
		if i < 0 {
			return -1, nil
		}
		return utf8.RuneCountInString(s[:i]), nil
	},
	"count": func(s string, a []any) (any, error) {
		sub, err := strArg("count", a)
		if err != nil {
			return nil, err
		}
		return strings.Count(s, sub), nil
	},
	"split": pySplit,
	"splitlines": func(s string, a []any) (any, error) {
		if err := arity("splitlines", a, 0, 0); err != nil {
			return nil, err
		}
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
		s = strings.TrimSuffix(s, "\n")
		if s == "" {
			return []any{}, nil
		}
		return strList(strings.Split(s, "\n")), nil
	},
	"replace": pyReplace,
	"join": func(s string, a []any) (any, error) {
		if err := arity("join", a, 1, 1); err != nil {
			return nil, err
		}
		items, err := iterable("join", a[0])
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(items))
		size := len(s) * len(items)
		for i, v := range items {
			p, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("join(): sequence item %d: expected str instance, %s found", i, typeName(v))
			}
			parts[i] = p
			size += len(p)
		}
		if size > maxStringResult {
			return nil, fmt.Errorf("join(): result longer than %d bytes", maxStringResult)
		}
		return strings.Join(parts, s), nil
	},
	"isdigit": func(s string, a []any) (any, error) { return noArgs("isdigit", a, isAll(s, unicode.IsDigit)) },
	"isalpha": func(s string, a []any) (any, error) { return noArgs("isalpha", a, isAll(s, unicode.IsLetter)) },
	"isalnum": func(s string, a []any) (any, error) {
		return noArgs("isalnum", a, isAll(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }))
	},
	"isspace": func(s string, a []any) (any, error) { return noArgs("isspace", a, isAll(s, unicode.IsSpace)) },
}

// callMethod is recv.name(args...) with Python semantics.
func callMethod(name string, recv any, args []any) (any, error) {
	switch x := recv.(type) {
	case string:
		if m, ok := strMethods[name]; ok {
			return m(x, args)
		}
	case map[string]any:
		switch name {
		case "get":
			if err := arity("get", args, 1, 2); err != nil {
				return nil, err
			}
			k, _ := args[0].(string)
			if v, ok := x[k]; ok {
				return v, nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return nil, nil
		case "keys", "values", "items":
			if err := arity(name, args, 0, 0); err != nil {
				return nil, err
			}
			out := make([]any, 0, len(x))
			for _, k := range sortedKeys(x) {
				switch name {
				case "keys":
					out = append(out, k)
				case "values":
					out = append(out, x[k])
				default:
					out = append(out, []any{k, x[k]})
				}
			}
			return out, nil
		}
	case []any:
		switch name {
		case "count", "index":
			if err := arity(name, args, 1, 1); err != nil {
				return nil, err
			}
			n, first := 0, -1
			for i, e := range x {
				if pyEqual(e, args[0]) {
					if first < 0 {
						first = i
					}
					n++
				}
			}
			if name == "count" {
				return n, nil
			}
			if first < 0 {
				return nil, fmt.Errorf("%s is not in list", pyRepr(args[0]))
			}
			return first, nil
		}
	}
	return nil, fmt.Errorf("'%s' object has no attribute '%s'", typeName(recv), name)
}

// knownMethod reports whether some receiver type has the method name.
func knownMethod(name string) bool {
	if _, ok := strMethods[name]; ok {
		return true
	}
	switch name {
	case "get", "keys", "values", "items", "count", "index":
		return true
	}
	return false
}

func noArgs(name string, a []any, v any) (any, error) {
	if err := arity(name, a, 0, 0); err != nil {
		return nil, err
	}
	return v, nil
}

func strArg(name string, a []any) (string, error) {
	if err := arity(name, a, 1, 1); err != nil {
		return "", err
	}
	s, ok := a[0].(string)
	if !ok {
		return "", fmt.Errorf("%s(): must be str, not %s", name, typeName(a[0]))
	}
	return s, nil
}

func stripper(name, s string, a []any, cut func(string, string) string, space func(string) string) (any, error) {
	if err := arity(name, a, 0, 1); err != nil {
		return nil, err
	}
	if len(a) == 0 || a[0] == nil {
		return space(s), nil
	}
	chars, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("%s arg must be None or str, not %s", name, typeName(a[0]))
	}
	return cut(s, chars), nil
}

func trimLeftSpace(s string) string  { return strings.TrimLeftFunc(s, unicode.IsSpace) }
func trimRightSpace(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

func affix(name, s string, a []any, has func(string, string) bool) (any, error) {
	if err := arity(name, a, 1, 1); err != nil {
		return nil, err
	}
	var cands []any
	switch x := a[0].(type) {
	case string:
		cands = []any{x}
	case []any:
		cands = x
	default:
		return nil, fmt.Errorf("%s arg must be str or a list of str, not %s", name, typeName(a[0]))
	}
	for _, c := range cands {
		p, ok := c.(string)
		if !ok {
			return nil, fmt.Errorf("%s arg must be str or a list of str, not a list containing %s", name, typeName(c))
		}
		if has(s, p) {
			return true, nil
		}
	}
	return false, nil
}

func pySplit(s string, a []any) (any, error) {
	if err := arity("split", a, 0, 2); err != nil {
		return nil, err
	}
	limit := -1
	if len(a) == 2 {
		n, ok := toInt(a[1])
		if !ok {
			return nil, fmt.Errorf("split(): maxsplit must be an integer, not %s", typeName(a[1]))
		}
		limit = n
	}
	if len(a) == 0 || a[0] == nil {
		return strList(splitSpace(s, limit)), nil
	}
	sep, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("split(): must be str or None, not %s", typeName(a[0]))
	}
	if sep == "" {
		return nil, fmt.Errorf("split(): empty separator")
	}
	if limit < 0 {
		return strList(strings.Split(s, sep)), nil
	}
	return strList(strings.SplitN(s, sep, limit+1)), nil
}

// splitSpace is Python's str.split() without a separator: runs of
// whitespace separate fields, and at most limit splits are made (limit < 0:
// no limit), the rest kept with its leading whitespace removed.
func splitSpace(s string, limit int) []string {
	var out []string
	for {
		s = trimLeftSpace(s)
		if s == "" {
			return out
		}
		if limit >= 0 && len(out) == limit {
			return append(out, s)
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		if end < 0 {
			return append(out, s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
}

func pyReplace(s string, a []any) (any, error) {
	if err := arity("replace", a, 2, 3); err != nil {
		return nil, err
	}
	old, ok1 := a[0].(string)
	repl, ok2 := a[1].(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("replace(): arguments must be str, not %s and %s", typeName(a[0]), typeName(a[1]))
	}
	n := -1
	if len(a) == 3 {
		c, ok := toInt(a[2])
		if !ok {
			return nil, fmt.Errorf("replace(): count must be an integer, not %s", typeName(a[2]))
		}
		n = c
	}
	hits := strings.Count(s, old)
	if n >= 0 && n < hits {
		hits = n
	}
	if len(s)+hits*(len(repl)-len(old)) > maxStringResult {
		return nil, fmt.Errorf("replace(): result longer than %d bytes", maxStringResult)
	}
	return strings.Replace(s, old, repl, n), nil
}

func strList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
