package planner

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// fields checks that n is a mapping with string keys from allowed, each
// once, and returns the value of each key present.
func (p *parser) fields(n *yaml.Node, what string, allowed []string) (map[string]*yaml.Node, bool) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping, not %s", what, kindOf(n))
		return nil, false
	}
	out := map[string]*yaml.Node{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		key, ok := p.key(k, seen, what)
		if !ok {
			continue
		}
		if !contains(allowed, key) {
			p.errorf(k, "unknown key `%s` in %s%s", key, what, hint(key, allowed, what == "step"))
			continue
		}
		out[key] = n.Content[i+1]
		p.keys[n.Content[i+1]] = k
	}
	return out, true
}

// key reads a mapping key, which must be a string seen once.
func (p *parser) key(k *yaml.Node, seen map[string]int, what string) (string, bool) {
	if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
		p.errorf(k, "a key in %s must be a string, not %s", what, kindOf(k))
		return "", false
	}
	if !utf8.ValidString(k.Value) {
		p.errorf(k, "a key in %s is not valid UTF-8", what)
		return "", false
	}
	if first, dup := seen[k.Value]; dup {
		p.errorf(k, "duplicate key `%s` in %s (first on line %d)", k.Value, what, first)
		return "", false
	}
	seen[k.Value] = k.Line
	return k.Value, true
}

// str reads an optional string field; null is "".
func (p *parser) str(n *yaml.Node, field string) string {
	if n == nil || isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		quote := ""
		if n.Kind == yaml.ScalarNode {
			quote = " (quote it)"
		}
		p.errorf(n, "`%s` must be a string, not %s%s", field, kindOf(n), quote)
		return ""
	}
	if !utf8.ValidString(n.Value) {
		p.errorf(n, "`%s` is not valid UTF-8", field)
		return ""
	}
	return n.Value
}

// list reads a sequence field.
func (p *parser) list(n *yaml.Node, field string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "`%s` must be a list, not %s", field, kindOf(n))
		return nil
	}
	return n.Content
}

// value converts a parameter value: strings, numbers, booleans, null,
// lists, and mappings with string keys.
func (p *parser) value(n *yaml.Node, path string) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		seen := map[string]int{}
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.ShortTag() == "!!merge" {
				p.errorf(k, "%s: YAML merge keys (<<) are not supported", path)
				ok = false
				continue
			}
			key, kok := p.key(k, seen, path)
			if !kok {
				ok = false
				continue
			}
			v, vok := p.value(n.Content[i+1], path+"."+key)
			ok = ok && vok
			m[key] = v
		}
		return m, ok
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, vok := p.value(c, fmt.Sprintf("%s[%d]", path, i))
			ok = ok && vok
			l = append(l, v)
		}
		return l, ok
	case yaml.ScalarNode:
		return p.scalar(n, path)
	}
	p.errorf(n, "%s: unsupported YAML node", path)
	return nil, false
}

func (p *parser) scalar(n *yaml.Node, path string) (any, bool) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!timestamp": // timestamps stay text, as yaml.v3 decodes them into any
		if !utf8.ValidString(n.Value) {
			p.errorf(n, "%s is not valid UTF-8", path)
			return nil, false
		}
		return n.Value, true
	case "!!null":
		return nil, true
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			p.errorf(n, "%s: %v", path, err)
			return nil, false
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			p.errorf(n, "%s: %s is not a finite number", path, n.Value)
			return nil, false
		}
		return v, true
	default:
		p.errorf(n, "%s: unsupported YAML tag %s", path, tag)
		return nil, false
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindOf names the type of n for messages.
func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch tag := n.ShortTag(); tag {
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	default:
		return "a value tagged " + tag
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// hint suggests the allowed key an unknown one was probably meant to be.
func hint(key string, allowed []string, inStep bool) string {
	best, bestDist := "", math.MaxInt
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	for _, a := range allowed {
		if d := distance(norm(key), norm(a)); d < bestDist {
			best, bestDist = a, d
		}
	}
	if bestDist <= 2 || bestDist <= len(key)/3 {
		return fmt.Sprintf(" (did you mean `%s`?)", best)
	}
	if inStep {
		return " (a tool's parameters go under `parameters`)"
	}
	return " (allowed: " + strings.Join(allowed, ", ") + ")"
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt / 2
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
