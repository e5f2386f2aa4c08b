package inventory

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/inventory/vault"
)

var errNotMapping = errors.New("YAML inventory has invalid structure, it should be a mapping of groups")

// ParseYAML parses an inventory in Ansible's YAML format: top-level keys
// are groups; a group's mapping may hold hosts (a mapping of host name or
// range to its variables, or null), vars, and children (a mapping of
// groups, recursively). Scalars are typed as YAML 1.1 types them (PyYAML,
// which Ansible uses): yes/no/on/off are booleans, 010 is octal, 1:30 is
// 90. Unlike Ansible, which warns and keeps the last one, a duplicate key
// is an error. Errors name file:line.
func ParseYAML(file string, data []byte) (*Inventory, error) {
	inv := newInventory(file)
	inv.addSource(file)
	if _, err := inv.parseYAML(file, data); err != nil {
		return nil, err
	}
	if err := inv.finish(); err != nil {
		return nil, err
	}
	return inv, nil
}

// parseYAML parses one YAML file into inv (the caller calls finish) and
// says whether data was a YAML mapping at all (if not, a file of unknown
// type is read as INI).
func (inv *Inventory) parseYAML(file string, data []byte) (mapping bool, err error) {
	p := &yamlParser{inv: inv, file: file, json: json.Valid(data), vault: inv.vault}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return false, p.yamlError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return false, &Error{File: file, Msg: "empty YAML inventory"}
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind == yaml.ScalarNode && isNull(root) {
		return false, &Error{File: file, Msg: "empty YAML inventory"}
	}
	if root.Kind != yaml.MappingNode {
		return false, &Error{File: file, Line: root.Line, Msg: errNotMapping.Error()}
	}
	return true, p.parse(root)
}

func (p *yamlParser) parse(root *yaml.Node) error {
	pairs, err := p.pairs(root)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		if s, ok := kv.key.(string); ok && s == "plugin" {
			return p.fail(kv.keyNode, "this is an inventory plugin configuration, not a YAML inventory")
		}
	}
	for _, kv := range pairs {
		if _, err := p.group(kv.keyNode, kv.key, kv.val, 0); err != nil {
			return err
		}
	}
	return nil
}

type yamlParser struct {
	inv  *Inventory
	file string
	// work counts nodes visited: aliases may repeat a subtree many times
	// ("billion laughs"), so the walk is bounded.
	work int
	// json is set when the whole file is JSON: Ansible's loader tries
	// json.loads before YAML, so numbers are JSON's (1e5 is a float).
	json bool
	// vault decrypts !vault values (nil: they are errors).
	vault *vault.Keyring
}

// maxYAMLWork bounds the nodes one inventory may expand to.
const maxYAMLWork = 1_000_000

func (p *yamlParser) spend(n *yaml.Node, k int) error {
	p.work += k
	if p.work > maxYAMLWork {
		return p.fail(n, "inventory expands to too many YAML nodes (aliases?)")
	}
	return nil
}

type yamlPair struct {
	keyNode *yaml.Node
	key     any
	val     *yaml.Node
}

var reYAMLErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *yamlParser) yamlError(err error) error {
	msg := err.Error()
	if m := reYAMLErrLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{File: p.file, Line: n, Msg: "YAML: " + m[2]}
	}
	return &Error{File: p.file, Msg: strings.Replace(msg, "yaml: ", "YAML: ", 1)}
}

func (p *yamlParser) fail(n *yaml.Node, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, a...)}
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// pairs returns a mapping's entries with merge keys (<<) applied and
// duplicate keys refused.
func (p *yamlParser) pairs(m *yaml.Node) ([]yamlPair, error) {
	if err := p.spend(m, 1+len(m.Content)/2); err != nil {
		return nil, err
	}
	var out []yamlPair
	seen := map[string]*yaml.Node{}
	var merged []yamlPair
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := resolveAlias(m.Content[i]), resolveAlias(m.Content[i+1])
		if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
			var srcs []*yaml.Node
			switch vn.Kind {
			case yaml.MappingNode:
				srcs = []*yaml.Node{vn}
			case yaml.SequenceNode:
				for _, c := range vn.Content {
					srcs = append(srcs, resolveAlias(c))
				}
			}
			for _, s := range srcs {
				if s.Kind != yaml.MappingNode {
					return nil, p.fail(s, "merge key (<<) needs a mapping")
				}
				sub, err := p.pairs(s)
				if err != nil {
					return nil, err
				}
				merged = append(merged, sub...)
			}
			continue
		}
		if kn.Kind != yaml.ScalarNode {
			return nil, p.fail(kn, "a mapping key must be a scalar")
		}
		key, err := p.scalar(kn)
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("%T:%v", key, key)
		if first, dup := seen[id]; dup {
			return nil, p.fail(kn, "duplicate key %q (first at line %d)", kn.Value, first.Line)
		}
		seen[id] = kn
		out = append(out, yamlPair{keyNode: kn, key: key, val: vn})
	}
	for _, kv := range merged { // explicit keys win over merged ones
		id := fmt.Sprintf("%T:%v", kv.key, kv.key)
		if _, ok := seen[id]; !ok {
			seen[id] = kv.keyNode
			out = append(out, kv)
		}
	}
	return out, nil
}

// group is the YAML plugin's _parse_group.
func (p *yamlParser) group(kn *yaml.Node, key any, body *yaml.Node, depth int) (*Group, error) {
	if depth > 100 {
		return nil, p.fail(kn, "groups nested too deeply")
	}
	name, ok := key.(string)
	if !ok || name == "" {
		return nil, p.fail(kn, "invalid group name %q: a group name must be a non-empty string", kn.Value)
	}
	if body.Kind != yaml.MappingNode && !(body.Kind == yaml.ScalarNode && isNull(body)) {
		// Ansible warns "not a valid group definition" and skips it.
		return nil, nil
	}
	g := p.inv.addGroup(name)
	if body.Kind != yaml.MappingNode {
		return g, nil
	}
	entries, err := p.pairs(body)
	if err != nil {
		return nil, err
	}
	for _, kv := range entries {
		section, _ := kv.key.(string)
		v := kv.val
		switch section {
		case "vars", "children", "hosts":
		default:
			// Ansible skips unknown keys with a warning.
			continue
		}
		if v.Kind == yaml.ScalarNode && isNull(v) {
			continue
		}
		var items []yamlPair
		switch v.Kind {
		case yaml.MappingNode:
			if items, err = p.pairs(v); err != nil {
				return nil, err
			}
		case yaml.ScalarNode: // "hosts: web1" means {web1: null}
			s, err := p.scalar(v)
			if err != nil {
				return nil, err
			}
			if _, ok := s.(string); !ok {
				return nil, p.fail(v, "invalid %q entry for group %q: it needs a mapping, found %s", section, name, yamlKind(v))
			}
			items = []yamlPair{{keyNode: v, key: s, val: &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: v.Line}}}
		default:
			return nil, p.fail(v, "invalid %q entry for group %q: it needs a mapping, found %s", section, name, yamlKind(v))
		}
		switch section {
		case "vars":
			for _, it := range items {
				val, err := p.value(it.val, 0)
				if err != nil {
					return nil, err
				}
				p.inv.setGroupVar(g, keyString(it.key), val, it.keyNode.Line)
			}
		case "children":
			for _, it := range items {
				child, err := p.group(it.keyNode, it.key, it.val, depth+1)
				if err != nil {
					return nil, err
				}
				if child == nil {
					cname, _ := it.key.(string)
					if child = p.inv.groupIdx[cname]; child == nil {
						return nil, p.fail(it.keyNode, "child %q of group %q is not a valid group definition", it.keyNode.Value, name)
					}
				}
				if err := p.inv.addChild(g, child, it.keyNode.Line); err != nil {
					return nil, p.fail(it.keyNode, "%v", err)
				}
			}
		case "hosts":
			for _, it := range items {
				if err := p.host(g, it); err != nil {
					return nil, err
				}
			}
		}
	}
	return g, nil
}

// host adds one entry of a hosts: mapping.
func (p *yamlParser) host(g *Group, it yamlPair) error {
	pattern, ok := it.key.(string)
	if !ok {
		return p.fail(it.keyNode, "host %s must be a string; enclose numbers in quotes", it.keyNode.Value)
	}
	names, port, err := p.inv.expand(pattern)
	if err != nil {
		return p.fail(it.keyNode, "host %q: %v", pattern, err)
	}
	var vars []yamlPair
	switch v := it.val; {
	case v.Kind == yaml.MappingNode:
		if vars, err = p.pairs(v); err != nil {
			return err
		}
	default:
		val, err := p.value(v, 0)
		if err != nil {
			return err
		}
		if execctx.Truthy(val) {
			return p.fail(v, "variables of host %q must be a mapping, found %s", pattern, yamlKind(v))
		}
	}
	keys, values, lines := make([]string, 0, len(vars)), make([]any, 0, len(vars)), make([]int, 0, len(vars))
	index := map[string]int{}
	for _, kv := range vars {
		v, err := p.value(kv.val, 0)
		if err != nil {
			return err
		}
		k := keyString(kv.key)
		if i, dup := index[k]; dup { // 1 and "1" are both "1"
			values[i], lines[i] = v, kv.keyNode.Line
			continue
		}
		index[k] = len(keys)
		keys, values, lines = append(keys, k), append(values, v), append(lines, kv.keyNode.Line)
	}
	if err := p.inv.addHosts(names, g, port, keys, values, lines, it.keyNode.Line); err != nil {
		return p.fail(it.keyNode, "%v", err)
	}
	return nil
}

func yamlKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return fmt.Sprintf("the scalar %q", n.Value)
}

// keyString is the JSON key Python writes for a decoded mapping key.
func keyString(k any) string {
	if s, err := pyKey(k); err == nil {
		return s
	}
	return fmt.Sprint(k)
}

// value decodes a node into string, int, float64, bool, nil, []any or
// map[string]any.
func (p *yamlParser) value(n *yaml.Node, depth int) (any, error) {
	n = resolveAlias(n)
	if depth > 200 {
		return nil, p.fail(n, "value nested too deeply")
	}
	if err := p.spend(n, 1); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return p.scalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := p.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		pairs, err := p.pairs(n)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(pairs))
		for _, kv := range pairs {
			v, err := p.value(kv.val, depth+1)
			if err != nil {
				return nil, err
			}
			out[keyString(kv.key)] = v
		}
		return out, nil
	}
	return nil, p.fail(n, "unexpected YAML node")
}

// YAML 1.1 implicit types, as PyYAML's resolver has them.
var (
	reY11Bool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reY11Int   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reY11Float = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reY11Null  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

func isNull(n *yaml.Node) bool {
	if n.Style&yaml.TaggedStyle != 0 {
		return n.Tag == "!!null"
	}
	return n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 &&
		reY11Null.MatchString(n.Value)
}

// scalar types a scalar node: quoted scalars are strings, plain ones are
// resolved with YAML 1.1's rules, explicit tags are honoured (Ansible's
// !unsafe and !vault read as strings).
func (p *yamlParser) scalar(n *yaml.Node) (any, error) {
	tag := ""
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.Tag
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		tag = "!!str"
	case p.json:
		switch v := n.Value; {
		case v == "null":
			tag = "!!null"
		case v == "true" || v == "false":
			tag = "!!bool"
		case strings.ContainsAny(v, ".eE"):
			f, err := strconv.ParseFloat(v, 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, p.fail(n, "invalid number %q", v)
			}
			return f, nil
		default:
			return pyIntValue(v, 10)
		}
	default:
		switch v := n.Value; {
		case reY11Null.MatchString(v):
			tag = "!!null"
		case reY11Bool.MatchString(v):
			tag = "!!bool"
		case reY11Int.MatchString(v):
			tag = "!!int"
		case reY11Float.MatchString(v):
			tag = "!!float"
		default:
			tag = "!!str"
		}
	}
	v := n.Value
	switch tag {
	case "!vault":
		plain, err := p.vault.Decrypt([]byte(v))
		if err != nil {
			return nil, p.fail(n, "!vault value: %v", err)
		}
		return VaultString(plain), nil
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(v) {
		case "yes", "true", "on", "y":
			return true, nil
		case "no", "false", "off", "n":
			return false, nil
		}
		return nil, p.fail(n, "invalid boolean %q", v)
	case "!!int":
		i, err := yaml11Int(v)
		if err != nil {
			return nil, p.fail(n, "%v", err)
		}
		return i, nil
	case "!!float":
		f, err := yaml11Float(v)
		if err != nil {
			return nil, p.fail(n, "%v", err)
		}
		return f, nil
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
		if err != nil {
			return nil, p.fail(n, "invalid !!binary: %v", err)
		}
		return string(b), nil
	}
	return v, nil
}

// yaml11Int is PyYAML's construct_yaml_int.
func yaml11Int(s string) (any, error) {
	v := strings.ReplaceAll(s, "_", "")
	sign := 1
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	var digits string
	base := 10
	switch {
	case v == "0":
		return 0, nil
	case strings.HasPrefix(v, "0b"):
		digits, base = v[2:], 2
	case strings.HasPrefix(v, "0x"):
		digits, base = v[2:], 16
	case strings.HasPrefix(v, "0"):
		digits, base = v[1:], 8
	case strings.Contains(v, ":"):
		n := 0
		for _, part := range strings.Split(v, ":") {
			d, err := strconv.Atoi(part)
			if err != nil || n > math.MaxInt/60-60 {
				return nil, fmt.Errorf("invalid integer %q", s)
			}
			n = n*60 + d
		}
		return sign * n, nil
	default:
		digits = v
	}
	if digits == "" {
		return nil, fmt.Errorf("invalid integer %q", s)
	}
	if sign < 0 {
		digits = "-" + digits
	}
	return pyIntValue(digits, base)
}

// yaml11Float is PyYAML's construct_yaml_float.
func yaml11Float(s string) (float64, error) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), nil
	case v == ".nan":
		return math.NaN(), nil
	case strings.Contains(v, ":"):
		parts := strings.Split(v, ":")
		f := 0.0
		for _, part := range parts {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return 0, fmt.Errorf("invalid float %q", s)
			}
			f = f*60 + d
		}
		return sign * f, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid float %q", s)
	}
	return sign * f, nil
}
