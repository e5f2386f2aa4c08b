package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strings"

	"github.com/autoshell/agent/tools"
)

// hostProperty is the host parameter every step tool gets.
var hostProperty = &tools.Property{Type: "string",
	Description: "Target: an inventory host (when the server has -i), an ~/.ssh/config alias, host, user@host, user@host:port, [v6addr]:port or ssh://user@host:port."}

// sshDest is an SSH destination as the ssh transport reads it:
// host:port and user@host:port (which ssh itself does not take) become
// ssh://user@host:port; everything else is as given.
func sshDest(d string) string {
	if strings.HasPrefix(d, "ssh://") {
		return d
	}
	hostport := d[strings.LastIndex(d, "@")+1:]
	if !strings.HasPrefix(hostport, "[") && strings.Count(hostport, ":") != 1 {
		return d // no port, or a bare IPv6 address
	}
	if h, port, err := net.SplitHostPort(hostport); err == nil && h != "" && port != "" {
		return "ssh://" + d
	}
	return d
}

// stepSchema is the MCP input schema of a step tool: the tool's own
// parameters as the LLM tools declare them (tools.Schema), plus host.
// Unlike the LLM's, it has no step keys (description, save_output_as,
// condition) and allows nothing else; a timeout says its bounds.
func stepSchema(s *tools.Schema) map[string]any {
	props := make(map[string]any, len(s.Properties)+1)
	for k, p := range s.Properties {
		props[k] = p
		if k == "timeout" && p.Type == "integer" {
			props[k] = map[string]any{"type": "integer", "minimum": 1, "maximum": MaxTimeout,
				"description": strings.TrimSpace(p.Description + fmt.Sprintf(" At most %d.", MaxTimeout))}
		}
	}
	props["host"] = hostProperty
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             append([]string{"host"}, s.Required...),
		"additionalProperties": false,
	}
}

// ownSchema is the input schema of one of the server's own tools, from
// its typed parameters as tools.SchemaOf reads them.
func ownSchema(s *tools.Schema) map[string]any {
	return map[string]any{"type": "object", "properties": s.Properties, "required": s.Required, "additionalProperties": false}
}

// errArgs marks arguments the client must fix.
var errArgs = errors.New("invalid arguments")

// stepArgs splits a step tool's raw arguments into the host and the
// tool's parameters. The arguments must be a JSON object of at most max
// bytes with a non-empty string host; every other key must be one of the
// tool's parameters (schema): a key the tool would not act on is refused,
// never ignored. Types are checked later by the tool's own decoding
// (tools.Registry.Prepare), as for the model's calls.
func stepArgs(raw json.RawMessage, max int, schema *tools.Schema) (host string, params map[string]any, err error) {
	m, err := object(raw, max)
	if err != nil {
		return "", nil, err
	}
	h, ok := m["host"]
	if !ok {
		return "", nil, fmt.Errorf("%w: missing required parameter \"host\"", errArgs)
	}
	host, ok = h.(string)
	if !ok || strings.TrimSpace(host) == "" {
		return "", nil, fmt.Errorf("%w: parameter \"host\" must be a non-empty string, not %s", errArgs, kind(h))
	}
	delete(m, "host")
	var unknown []string
	for k := range m {
		if _, ok := schema.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		valid := append(slices.Sorted(maps.Keys(schema.Properties)), "host")
		return "", nil, fmt.Errorf("%w: unknown parameter %s; valid parameters: %s", errArgs,
			strings.Join(quoted(unknown), ", "), strings.Join(quoted(valid), ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkType(k, schema.Properties[k], m[k]); err != nil {
			return "", nil, fmt.Errorf("%w: %v", errArgs, err)
		}
	}
	return strings.TrimSpace(host), m, nil
}

// MaxTimeout is the largest timeout parameter, in seconds (a day).
const MaxTimeout = 86400

// checkType holds an MCP client to the schema it was given: unlike the
// model's calls (where "30" for an integer is the model's evident
// meaning, tools.Registry coerces it), a client's value must have the
// declared JSON type, an integer must be whole and fit, and a timeout is
// between 1 and MaxTimeout seconds.
func checkType(name string, p *tools.Property, v any) error {
	want := p.Type
	ok := false
	switch want {
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(json.Number)
	case "integer":
		n, isNum := v.(json.Number)
		if !isNum {
			break
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) {
			return fmt.Errorf("parameter %q must be a whole number, not %s", name, n)
		}
		if name == "timeout" && (f < 1 || f > MaxTimeout) {
			return fmt.Errorf("parameter \"timeout\" is %s; it must be between 1 and %d seconds", n, MaxTimeout)
		}
		if f >= math.MaxInt64 || f <= math.MinInt64 {
			return fmt.Errorf("parameter %q is %s: too large", name, n)
		}
		ok = true
	case "array":
		var xs []any
		if xs, ok = v.([]any); ok && p.Items != nil {
			for i, x := range xs {
				if err := checkType(fmt.Sprintf("%s[%d]", name, i), p.Items, x); err != nil {
					return err
				}
			}
		}
	case "object":
		_, ok = v.(map[string]any)
	default:
		ok = true
	}
	if !ok {
		return fmt.Errorf("parameter %q must be %s, not %s", name, article(want), kind(v))
	}
	return nil
}

// article is a JSON type with its article: "an integer", "a string".
func article(typ string) string {
	if typ == "integer" || typ == "object" || typ == "array" {
		return "an " + typ
	}
	return "a " + typ
}

// object decodes raw as a JSON object of at most max bytes (absent or
// null: an empty one).
func object(raw json.RawMessage, max int) (map[string]any, error) {
	if len(raw) > max {
		return nil, fmt.Errorf("%w: arguments are %d bytes; the limit is %d", errArgs, len(raw), max)
	}
	m := map[string]any{}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return m, nil
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: arguments must be a JSON object: %v", errArgs, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: arguments must be one JSON object", errArgs)
	}
	return m, nil
}

// decodeOwn decodes the arguments of one of the server's own tools into
// p, refusing unknown keys and wrong types.
func decodeOwn(raw json.RawMessage, max int, p any) error {
	if _, err := object(raw, max); err != nil {
		return err
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(p); err != nil {
		return fmt.Errorf("%w: %v", errArgs, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// kind names a JSON value's type for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
