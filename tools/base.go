package tools

import (
	"context"
	"encoding/json"

	"github.com/autoshell/agent/transport"
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

// prepare decodes raw once into a P, checked as Validate checks it, and
// binds it to self, the tool that embeds b (a base cannot see the methods
// of the struct it is embedded in). A nil binding with a nil error means
// self has no typed path: the Call uses its raw-JSON methods.
func (b base[P]) prepare(self Tool, raw json.RawMessage) (binding, error) {
	p, err := b.params(raw)
	if err != nil {
		return nil, err
	}
	r, ok := self.(typedRunner[P])
	if !ok {
		return nil, nil
	}
	return &typedCall[P]{t: r, p: p}, nil
}

// invalid is the Output for parameters that failed decode.
func invalid(name string, err error) Output {
	return ErrorOutput("%s: %v", name, err)
}

// preparer is a tool of this package: prepare decodes raw once into the
// tool's typed parameters with the checks of Validate.
type preparer interface {
	prepare(self Tool, raw json.RawMessage) (binding, error)
}

// binding is a tool bound to its decoded parameters: what a Call runs.
// ok is false where the tool is not a Previewer, Commander or Toucher.
type binding interface {
	run(ctx context.Context, tr transport.Transport) (Output, error)
	preview(ctx context.Context, tr transport.Transport) (out Output, ok bool, err error)
	commandLine() (line string, ok bool, err error)
	touches() (eff Effects, ok bool)
}

// The typed path of a tool with parameters P: the body its raw-JSON
// method (Run, Preview, CommandLine, Touches) runs after decoding. A tool
// implementing one of the optional ones must implement the public
// interface too (Previewer, Commander, Toucher), so that a Call and the
// tool agree on what the tool is.
type (
	typedRunner[P any] interface {
		run(ctx context.Context, tr transport.Transport, p P) (Output, error)
	}
	typedPreviewer[P any] interface {
		preview(ctx context.Context, tr transport.Transport, p P) (Output, error)
	}
	typedCommander[P any] interface {
		commandLine(p P) (string, error)
	}
	typedToucher[P any] interface {
		touches(p P) Effects
	}
)

// typedCall is a tool with a typed path bound to its parameters. The
// tool's typed methods take p by value and do not modify what it points
// to, so a typedCall may be run more than once, and concurrently.
type typedCall[P any] struct {
	t typedRunner[P]
	p P
}

func (c *typedCall[P]) run(ctx context.Context, tr transport.Transport) (Output, error) {
	return c.t.run(ctx, tr, c.p)
}

func (c *typedCall[P]) preview(ctx context.Context, tr transport.Transport) (Output, bool, error) {
	pv, ok := c.t.(typedPreviewer[P])
	if !ok {
		return Output{}, false, nil
	}
	out, err := pv.preview(ctx, tr, c.p)
	return out, true, err
}

func (c *typedCall[P]) commandLine() (string, bool, error) {
	cmd, ok := c.t.(typedCommander[P])
	if !ok {
		return "", false, nil
	}
	line, err := cmd.commandLine(c.p)
	return line, true, err
}

func (c *typedCall[P]) touches() (Effects, bool) {
	tc, ok := c.t.(typedToucher[P])
	if !ok {
		return Effects{}, false
	}
	return tc.touches(c.p), true
}
