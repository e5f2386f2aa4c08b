package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// checker is implemented by params structs with rules beyond their schema.
type checker interface{ check() error }

// decode checks raw against s and fills p. Parameters are coerced where an
// LLM's intent is unambiguous: "30" for an integer, "true" for a boolean,
// 30.0 for an integer; null means absent. Unknown keys other than the step
// keys are an error naming the valid ones. The error, when not nil, wraps
// ErrInvalidParams and reads well as a message to the model.
func decode(s *Schema, raw json.RawMessage, p any) error {
	m := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return fmt.Errorf("%w: parameters must be a JSON object: %v", ErrInvalidParams, err)
		}
	}
	clean, err := coerce(s, m)
	if err != nil {
		return err
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	if err := json.Unmarshal(b, p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	decodePaths(p)
	if c, ok := p.(checker); ok {
		if err := c.check(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidParams, err)
		}
	}
	return nil
}

// coerce validates m against s and returns the tool's own parameters. Of
// several invalid values, the error names the first parameter in sorted
// order, so that one call always gets the same message.
func coerce(s *Schema, m map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	var unknown []string
	var bad string
	var badErr error
	for k, v := range m {
		prop, ok := s.Properties[k]
		if !ok {
			if !slices.Contains(stepKeys, k) {
				unknown = append(unknown, k)
			}
			continue
		}
		if v == nil {
			continue
		}
		cv, err := coerceValue(prop, v)
		if err != nil {
			if badErr == nil || k < bad {
				bad, badErr = k, err
			}
			continue
		}
		out[k] = cv
	}
	if badErr != nil {
		return nil, fmt.Errorf("%w: parameter %q: %v", ErrInvalidParams, bad, badErr)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("%w: unknown parameter %s; valid parameters: %s", ErrInvalidParams,
			quoteList(unknown), quoteList(propertyNames(s)))
	}
	for _, k := range s.Required {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("%w: missing required parameter %q", ErrInvalidParams, k)
		}
	}
	return out, nil
}

func coerceValue(p *Property, v any) (any, error) {
	switch p.Type {
	case "string":
		switch x := v.(type) {
		case string:
			if len(p.Enum) > 0 && !slices.Contains(p.Enum, x) {
				return nil, fmt.Errorf("must be one of %s, not %q", quoteList(p.Enum), x)
			}
			return x, nil
		case json.Number:
			if len(p.Enum) == 0 {
				return x.String(), nil
			}
		}
	case "integer":
		switch x := v.(type) {
		case json.Number:
			return wholeNumber(x.String())
		case string:
			return wholeNumber(strings.TrimSpace(x))
		}
	case "number":
		switch x := v.(type) {
		case json.Number:
			return x.Float64()
		case string:
			return strconv.ParseFloat(strings.TrimSpace(x), 64)
		}
	case "boolean":
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
	case "array":
		switch x := v.(type) {
		case []any:
			out := make([]any, 0, len(x))
			for i, e := range x {
				ce, err := coerceValue(p.Items, e)
				if err != nil {
					return nil, fmt.Errorf("item %d: %v", i, err)
				}
				out = append(out, ce)
			}
			return out, nil
		case string: // a lone value where a list was asked for
			ce, err := coerceValue(p.Items, x)
			if err != nil {
				return nil, err
			}
			return []any{ce}, nil
		}
	case "object":
		if x, ok := v.(map[string]any); ok {
			return x, nil
		}
	}
	return nil, fmt.Errorf("want %s, got %s", article(p.Type), describe(v))
}

func wholeNumber(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, fmt.Errorf("want an integer, got %q", s)
	}
	return int64(f), nil
}

func article(t string) string {
	if t == "integer" || t == "array" || t == "object" {
		return "an " + t
	}
	return "a " + t
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case json.Number:
		return "number " + x.String()
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func propertyNames(s *Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}
