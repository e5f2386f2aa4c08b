package execctx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxStringResult bounds strings built by replace() and join(), which could
// otherwise grow a condition's memory quadratically.
const maxStringResult = 1 << 20

type pyFunc func(args []any) (any, error)

// pyFuncs are the Python built-in functions a condition may call.
var pyFuncs = map[string]pyFunc{
	"len": func(a []any) (any, error) {
		if err := arity("len", a, 1, 1); err != nil {
			return nil, err
		}
		switch x := a[0].(type) {
		case string:
			return utf8.RuneCountInString(x), nil
		case []any:
			return len(x), nil
		case map[string]any:
			return len(x), nil
		}
		return nil, fmt.Errorf("object of type '%s' has no len()", typeName(a[0]))
	},
	"int":   pyInt,
	"float": pyFloat,
	"str": func(a []any) (any, error) {
		if err := arity("str", a, 0, 1); err != nil || len(a) == 0 {
			return "", err
		}
		return pyStr(a[0]), nil
	},
	"bool": func(a []any) (any, error) {
		if err := arity("bool", a, 0, 1); err != nil || len(a) == 0 {
			return false, err
		}
		return Truthy(a[0]), nil
	},
	"abs": func(a []any) (any, error) {
		if err := arity("abs", a, 1, 1); err != nil {
			return nil, err
		}
		f, isInt, ok := number(a[0])
		if !ok {
			return nil, fmt.Errorf("bad operand type for abs(): '%s'", typeName(a[0]))
		}
		if isInt {
			i := intOf(a[0])
			if i == math.MinInt {
				return nil, fmt.Errorf("abs(): integer overflow")
			}
			if i < 0 {
				i = -i
			}
			return i, nil
		}
		return math.Abs(f), nil
	},
	"min": func(a []any) (any, error) { return minMax("min", "<", a) },
	"max": func(a []any) (any, error) { return minMax("max", ">", a) },
	"any": func(a []any) (any, error) { return anyAll("any", a, true) },
	"all": func(a []any) (any, error) { return anyAll("all", a, false) },
	"sum": pySum,
}

func arity(name string, a []any, lo, hi int) error {
	if len(a) < lo || len(a) > hi {
		if lo == hi {
			return fmt.Errorf("%s() takes %d argument(s) (%d given)", name, lo, len(a))
		}
		return fmt.Errorf("%s() takes %d to %d arguments (%d given)", name, lo, hi, len(a))
	}
	return nil
}

func pyInt(a []any) (any, error) {
	if err := arity("int", a, 0, 2); err != nil || len(a) == 0 {
		return 0, err
	}
	if len(a) == 2 {
		s, ok := a[0].(string)
		base, okB := toInt(a[1])
		if !ok || !okB {
			return nil, fmt.Errorf("int() can't convert non-string with explicit base")
		}
		if base != 0 && (base < 2 || base > 36) {
			return nil, fmt.Errorf("int() base must be >= 2 and <= 36, or 0")
		}
		return parseInt(s, base)
	}
	switch x := a[0].(type) {
	case string:
		return parseInt(x, 10)
	case bool:
		return intOf(x), nil
	}
	if i, ok := toInt(a[0]); ok {
		return i, nil
	}
	if f, ok := toFloat(a[0]); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("cannot convert float %s to integer", formatFloat(f))
		}
		t := math.Trunc(f)
		if t >= 0x1p63 || t < -0x1p63 {
			return nil, fmt.Errorf("int(): %s is too large", formatFloat(f))
		}
		return int(t), nil
	}
	return nil, fmt.Errorf("int() argument must be a string or a number, not '%s'", typeName(a[0]))
}

func parseInt(s string, base int) (any, error) {
	t := strings.TrimSpace(s)
	clean := t
	if strings.Contains(t, "_") {
		if strings.Contains(t, "__") || strings.HasPrefix(strings.TrimLeft(t, "+-"), "_") || strings.HasSuffix(t, "_") {
			clean = "!"
		} else {
			clean = strings.ReplaceAll(t, "_", "")
		}
	}
	i, err := strconv.ParseInt(clean, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, fmt.Errorf("int(): %s is too large", quotePy(clipRunes(s, 40)))
		}
		return nil, fmt.Errorf("invalid literal for int() with base %d: %s", base, quotePy(clipRunes(s, 40)))
	}
	return int(i), nil
}

func pyFloat(a []any) (any, error) {
	if err := arity("float", a, 0, 1); err != nil || len(a) == 0 {
		return 0.0, err
	}
	if s, ok := a[0].(string); ok {
		t := strings.TrimSpace(s)
		if strings.ContainsAny(t, "xXpP_") {
			return nil, fmt.Errorf("could not convert string to float: %s", quotePy(clipRunes(s, 40)))
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			ne, ok := err.(*strconv.NumError)
			if !ok || ne.Err != strconv.ErrRange {
				return nil, fmt.Errorf("could not convert string to float: %s", quotePy(clipRunes(s, 40)))
			}
		}
		return f, nil
	}
	if f, _, ok := number(a[0]); ok {
		return f, nil
	}
	return nil, fmt.Errorf("float() argument must be a string or a number, not '%s'", typeName(a[0]))
}

// iterable returns the elements Python would iterate over.
func iterable(name string, v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case map[string]any:
		out := make([]any, 0, len(x))
		for _, k := range sortedKeys(x) {
			out = append(out, k)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s(): '%s' object is not iterable", name, typeName(v))
}

func minMax(name, op string, a []any) (any, error) {
	items := a
	if len(a) == 1 {
		var err error
		if items, err = iterable(name, a[0]); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s() arg is an empty sequence", name)
	}
	best := items[0]
	for _, v := range items[1:] {
		better, err := pyCompare(op, v, best)
		if err != nil {
			return nil, fmt.Errorf("%s(): %w", name, err)
		}
		if better {
			best = v
		}
	}
	return best, nil
}

func anyAll(name string, a []any, wantAny bool) (any, error) {
	if err := arity(name, a, 1, 1); err != nil {
		return nil, err
	}
	items, err := iterable(name, a[0])
	if err != nil {
		return nil, err
	}
	for _, v := range items {
		if Truthy(v) == wantAny {
			return wantAny, nil
		}
	}
	return !wantAny, nil
}

func pySum(a []any) (any, error) {
	if err := arity("sum", a, 1, 2); err != nil {
		return nil, err
	}
	items, err := iterable("sum", a[0])
	if err != nil {
		return nil, err
	}
	var acc any = 0
	if len(a) == 2 {
		acc = a[1]
	}
	for _, v := range items {
		if acc, err = arith("+", acc, v); err != nil {
			return nil, fmt.Errorf("sum(): %w", err)
		}
	}
	return acc, nil
}

// arith implements + - * / % ** with Python's rules for ints and floats.
func arith(op string, a, b any) (any, error) {
	fa, ia, okA := number(a)
	fb, ib, okB := number(b)
	if !okA || !okB {
		if sa, ok := a.(string); ok && op == "+" {
			if sb, ok := b.(string); ok {
				return sa + sb, nil
			}
		}
		return nil, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))
	}
	bothInt := ia && ib
	x, y := intOf(a), intOf(b)
	switch op {
	case "+":
		if bothInt && !((y > 0 && x > math.MaxInt-y) || (y < 0 && x < math.MinInt-y)) {
			return x + y, nil
		}
		return fa + fb, nil
	case "/":
		if fb == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return fa / fb, nil
	case "%":
		if fb == 0 {
			return nil, fmt.Errorf("modulo by zero")
		}
		if bothInt {
			m := x % y
			if m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return m, nil
		}
		m := math.Mod(fa, fb)
		if m != 0 && (m < 0) != (fb < 0) {
			m += fb
		}
		return m, nil
	case "**":
		if bothInt && y >= 0 {
			if math.Pow(math.Abs(fa), fb) >= 1<<62 {
				return nil, fmt.Errorf("integer %d ** %d is too large", x, y)
			}
			r, base := 1, x
			for e := y; e > 0; e >>= 1 {
				if e&1 == 1 {
					r *= base
				}
				if e > 1 {
					base *= base
				}
			}
			return r, nil
		}
		if fa == 0 && fb < 0 {
			return nil, fmt.Errorf("zero to a negative power")
		}
		return math.Pow(fa, fb), nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

// pyIn is Python's `a in b`.
func pyIn(a, b any) (bool, error) {
	switch x := b.(type) {
	case string:
		s, ok := a.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(a))
		}
		return strings.Contains(x, s), nil
	case []any:
		for _, e := range x {
			if pyEqual(a, e) {
				return true, nil
			}
		}
		return false, nil
	case map[string]any:
		k, ok := a.(string)
		if !ok {
			return false, nil
		}
		_, found := x[k]
		return found, nil
	}
	return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(b))
}

// pyItem is Python's obj[key] (and obj.key for dicts).
func pyItem(obj, key any) (any, error) {
	switch x := obj.(type) {
	case map[string]any:
		k, ok := key.(string)
		if !ok {
			return nil, fmt.Errorf("%w: key %s not found", ErrUnknownVariable, pyRepr(key))
		}
		v, found := x[k]
		if !found {
			return nil, fmt.Errorf("%w: key %s not found", ErrUnknownVariable, quotePy(k))
		}
		return v, nil
	case []any:
		i, err := index("list", key, len(x))
		if err != nil {
			return nil, err
		}
		return x[i], nil
	case string:
		if _, isStr := key.(string); isStr {
			return nil, fmt.Errorf("'str' object has no attribute %s", quotePy(key.(string)))
		}
		runes := []rune(x)
		i, err := index("string", key, len(runes))
		if err != nil {
			return nil, err
		}
		return string(runes[i]), nil
	}
	if k, ok := key.(string); ok {
		return nil, fmt.Errorf("'%s' object has no attribute %s", typeName(obj), quotePy(k))
	}
	return nil, fmt.Errorf("'%s' object is not subscriptable", typeName(obj))
}

func index(kind string, key any, n int) (int, error) {
	if _, isBool := key.(bool); isBool {
		return 0, fmt.Errorf("%s indices must be integers, not bool", kind)
	}
	i, ok := toInt(key)
	if !ok {
		return 0, fmt.Errorf("%s indices must be integers, not %s", kind, typeName(key))
	}
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("%s index out of range", kind)
	}
	return i, nil
}

// pySlice is Python's obj[from:to] for strings (by code point) and lists.
func pySlice(obj, from, to any) (any, error) {
	bound := func(v any, n, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, ok := toInt(v)
		if !ok {
			return 0, fmt.Errorf("slice indices must be integers or None, not %s", typeName(v))
		}
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n), nil
	}
	var n int
	var runes []rune
	switch x := obj.(type) {
	case string:
		runes = []rune(x)
		n = len(runes)
	case []any:
		n = len(x)
	default:
		return nil, fmt.Errorf("'%s' object is not subscriptable", typeName(obj))
	}
	lo, err := bound(from, n, 0)
	if err != nil {
		return nil, err
	}
	hi, err := bound(to, n, n)
	if err != nil {
		return nil, err
	}
	hi = max(hi, lo)
	if _, ok := obj.(string); ok {
		return string(runes[lo:hi]), nil
	}
	return append([]any(nil), obj.([]any)[lo:hi]...), nil
}

// clipRunes shortens s to at most n runes for error messages.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// isAll reports whether s is non-empty and every rune satisfies f.
func isAll(s string, f func(rune) bool) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !f(r) {
			return false
		}
	}
	return true
}

// jsonLoadsValue is Python's json.loads(s): integers become ints, other
// numbers floats.
func jsonLoadsValue(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("json.loads(): the JSON object must be str, not %s", typeName(v))
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("json.loads(): %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("json.loads(): extra data after the JSON value")
	}
	out, err := normalize(jsonNumbers(out))
	if err != nil {
		return nil, fmt.Errorf("json.loads(): %w", err)
	}
	return out, nil
}

func jsonNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
	}
	return v
}
