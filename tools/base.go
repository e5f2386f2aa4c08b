package tools

import (
	"encoding/json"
)

// base carries what every tool has: a name, a description and a schema
// generated from its params struct P.
type base[P any] struct {
	name, desc string
	schema     *Schema
}

func newBase[P any](name, desc string) base[P] {
	return base[P]{name: name, desc: desc, schema: SchemaOf[P]()}
}

func (b base[P]) Name() string        { return b.name }
func (b base[P]) Description() string { return b.desc }
func (b base[P]) Schema() *Schema     { return b.schema }

// params decodes raw into a P (see decode).
func (b base[P]) params(raw json.RawMessage) (P, error) {
	var p P
	err := decode(b.schema, raw, &p)
	return p, err
}

func (b base[P]) validate(raw json.RawMessage) error {
	_, err := b.params(raw)
	return err
}

// invalid is the Output for parameters that failed decode.
func invalid(name string, err error) Output {
	return ErrorOutput("%s: %v", name, err)
}
