package tools

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Schema is the JSON Schema of a tool's parameters: always "type": "object"
// with "properties" and "required" (possibly empty, never null).
//
// It deliberately has no "additionalProperties": false, because an LLM tool
// call carries the step's "description", "save_output_as" and "condition"
// beside the tool's own parameters (DESIGN.md). Other unknown keys are
// still rejected by decoding (see Registry.Validate).
type Schema struct {
	Type       string               `json:"type"`
	Properties map[string]*Property `json:"properties"`
	Required   []string             `json:"required"`
}

// Property is one parameter of a Schema.
type Property struct {
	Type        string    `json:"type"`
	Description string    `json:"description,omitempty"`
	Enum        []string  `json:"enum,omitempty"`
	Items       *Property `json:"items,omitempty"`
}

// SchemaOf generates the Schema of a params struct P from its fields' tags:
// `json:"name"` names a parameter (",omitempty" makes it optional, otherwise
// it is required), `description:"…"` describes it, `enum:"a,b"` lists the
// allowed values of a string. Field types map to JSON types: string, bool →
// boolean, int kinds → integer, float kinds → number, []string → array of
// strings, map[string]any → object. Any other type panics: schemas are
// built at start-up from static structs.
func SchemaOf[P any]() *Schema {
	t := reflect.TypeFor[P]()
	s := &Schema{Type: "object", Properties: map[string]*Property{}, Required: []string{}}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		p := &Property{Type: jsonType(f.Type), Description: f.Tag.Get("description")}
		if p.Type == "array" {
			p.Items = &Property{Type: jsonType(f.Type.Elem())}
		}
		if e := f.Tag.Get("enum"); e != "" {
			p.Enum = strings.Split(e, ",")
		}
		s.Properties[name] = p
		if !slices.Contains(strings.Split(opts, ","), "omitempty") {
			s.Required = append(s.Required, name)
		}
	}
	return s
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	case reflect.Map:
		return "object"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	panic(fmt.Sprintf("tools: no JSON schema type for %v", t))
}

// withStepProperties returns s plus the optional step keys an LLM tool call
// carries (DESIGN.md); a tool's own parameter of the same name wins.
func withStepProperties(s *Schema) *Schema {
	out := &Schema{Type: s.Type, Properties: make(map[string]*Property, len(s.Properties)+3), Required: s.Required}
	for k, v := range s.Properties {
		out.Properties[k] = v
	}
	for _, k := range stepKeys {
		if _, ok := out.Properties[k]; !ok {
			out.Properties[k] = stepProperties[k]
		}
	}
	return out
}

// stepKeys ride along in an LLM tool call's arguments; tools ignore them.
var stepKeys = []string{"description", "save_output_as", "condition"}

var stepProperties = map[string]*Property{
	"description":    {Type: "string", Description: "What the step does."},
	"save_output_as": {Type: "string", Description: "Variable for the output."},
	"condition":      {Type: "string", Description: "Run only if true."},
}
