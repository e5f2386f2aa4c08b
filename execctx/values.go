package execctx

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// maxValueDepth bounds how deeply nested a stored value may be.
const maxValueDepth = 32

// normalize converts v into the value model shared by templates and
// conditions: nil, string, bool, int, float64, []any and map[string]any, all
// freshly allocated so the caller's value can change afterwards without
// affecting the context.
func normalize(v any) (any, error) { return normalizeDepth(v, 0) }

func normalizeDepth(v any, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxValueDepth)
	}
	switch x := v.(type) {
	case nil, string, bool, int, float64:
		return x, nil
	case []byte:
		return string(x), nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt {
			return nil, fmt.Errorf("integer %d out of range", u)
		}
		return int(u), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return []any{}, nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			e, err := normalizeDepth(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %s is not a string", rv.Type().Key())
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			e, err := normalizeDepth(it.Value().Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			out[it.Key().String()] = e
		}
		return out, nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return normalizeDepth(rv.Elem().Interface(), depth+1)
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

// deepCopy copies the containers of a normalized value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	}
	return v
}

// typeName is the Python name of v's type, for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case string:
		return "str"
	case bool:
		return "bool"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	if _, ok := toInt(v); ok {
		return "int"
	}
	if _, ok := toFloat(v); ok {
		return "float"
	}
	return fmt.Sprintf("%T", v)
}

// toInt reports v as an int when it is any Go integer type (bool excluded).
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		rv := reflect.ValueOf(x)
		if rv.CanInt() {
			return int(rv.Int()), true
		}
		if rv.Uint() > math.MaxInt {
			return 0, false
		}
		return int(rv.Uint()), true
	}
	return 0, false
}

// toFloat reports v as a float64 when it is a Go float type.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// number converts ints, floats and bools (Python's numeric tower) to a
// float64, also reporting whether the value is integral-typed.
func number(v any) (f float64, isInt bool, ok bool) {
	if b, isBool := v.(bool); isBool {
		if b {
			return 1, true, true
		}
		return 0, true, true
	}
	if i, ok := toInt(v); ok {
		return float64(i), true, true
	}
	if f, ok := toFloat(v); ok {
		return f, false, true
	}
	return 0, false, false
}

// Truthy is Python's bool(v), for the values templating and conditions use.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if f, _, ok := number(v); ok {
		return f != 0
	}
	return true
}

// pyEqual is Python's ==: numbers compare by value (True == 1), strings,
// lists and dicts by content, and values of unrelated types are unequal.
func pyEqual(a, b any) bool {
	if fa, ia, ok := number(a); ok {
		fb, ib, ok := number(b)
		if !ok {
			return false
		}
		if ia && ib {
			return intOf(a) == intOf(b)
		}
		return fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !pyEqual(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// intOf returns an integral value (int or bool) as an int.
func intOf(v any) int {
	if b, ok := v.(bool); ok {
		if b {
			return 1
		}
		return 0
	}
	i, _ := toInt(v)
	return i
}

// pyCompare implements <, <=, > and >= for numbers and for strings; any
// other pairing is an error, as in Python.
func pyCompare(op string, a, b any) (bool, error) {
	var c int
	if fa, _, ok := number(a); ok {
		fb, _, ok := number(b)
		if !ok {
			return false, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
		}
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return false, nil
		}
		switch {
		case fa < fb:
			c = -1
		case fa > fb:
			c = 1
		}
	} else {
		sa, okA := a.(string)
		sb, okB := b.(string)
		if !okA || !okB {
			return false, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
		}
		c = strings.Compare(sa, sb)
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, fmt.Errorf("unknown comparison %s", op)
}

// pyStr is Python's str(v).
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v), with dict keys sorted for determinism.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return quotePy(x)
	case nil, bool:
		return pyStr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = quotePy(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	if i, ok := toInt(v); ok {
		return strconv.Itoa(i)
	}
	if f, ok := toFloat(v); ok {
		return formatFloat(f)
	}
	return fmt.Sprint(v)
}

// formatFloat prints f the way Python's repr does for common values:
// 2.0, 0.5, 1e+16, inf, nan.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if a := math.Abs(f); a >= 1e-4 && a < 1e16 {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

// quotePy quotes s with single quotes, like Python's repr of a str.
func quotePy(s string) string {
	q := strconv.Quote(s)
	inner := q[1 : len(q)-1]
	inner = strings.ReplaceAll(inner, `\"`, `"`)
	inner = strings.ReplaceAll(inner, `'`, `\'`)
	return "'" + inner + "'"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
