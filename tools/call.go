package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// Access is one file a call acts on.
type Access struct {
	// Op is safety.FileRead, FileWrite or FileEdit.
	Op safety.FileOp
	// Path is the file as the resolved parameters give it: "~" and
	// relative paths are not expanded.
	Path string
	// Local is set for a file on the operator's machine (a transfer's
	// local_path), not on the target.
	Local bool
}

// Effects is what a call that runs no command line acts on: its files,
// and the least level it has whatever they are.
type Effects struct {
	Files []Access
	// Min is the call's least level (transfers: safety.Medium).
	Min safety.Level
	// Reason says why Min, when Min > safety.Safe.
	Reason string
}

// Toucher is implemented by tools that run no command line (the file
// tools, the transfers, check_condition, sys_monitor): Touches lists what
// the call acts on, from its parameters, with no I/O. Every tool of
// Default is exactly one of Commander or Toucher; a tool that is neither
// is unknown to risk classification (the executor rates it medium).
type Toucher interface {
	Touches(params json.RawMessage) (Effects, error)
}

// Call is one tool call prepared once: its parameters encoded once (Raw)
// and decoded once into the tool's typed parameters, checked as Validate
// checks them. CommandLine, Touches, Preview and Run work from those
// without encoding or decoding again, and give what the tool's own
// methods give for Raw. A tool registered from outside this package is
// called through its raw-JSON methods with Raw.
//
// A Call is safe for concurrent use, and may be previewed and run more
// than once. Params and Raw are shared: do not modify them.
type Call struct {
	Name string
	// Params are the resolved parameters as given.
	Params map[string]any
	// Raw is Params encoded once.
	Raw json.RawMessage

	tool Tool
	b    binding // nil: the tool's raw-JSON methods with Raw
}

// Prepare looks the tool called name up, encodes params once and decodes
// them into the tool's typed parameters, with the checks and errors of
// Validate: errors wrap ErrUnknownTool or ErrInvalidParams, the latter
// prefixed with "name: ".
func (r *Registry) Prepare(name string, params map[string]any) (*Call, error) {
	t, ok := r.tools[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	c := &Call{Name: name, Params: params, Raw: raw, tool: t}
	if p, ok := t.(preparer); ok {
		if c.b, err = p.prepare(t, raw); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return c, nil
}

// Tool returns the tool called.
func (c *Call) Tool() Tool { return c.tool }

// CommandLine returns the line a Commander runs; ok is false for other
// tools.
func (c *Call) CommandLine() (line string, ok bool, err error) {
	if c.b != nil {
		return c.b.commandLine()
	}
	cmd, ok := c.tool.(Commander)
	if !ok {
		return "", false, nil
	}
	line, err = cmd.CommandLine(c.Raw)
	return line, true, err
}

// Touches returns a Toucher's Effects; ok is false for other tools.
func (c *Call) Touches() (eff Effects, ok bool, err error) {
	if c.b != nil {
		eff, ok = c.b.touches()
		return eff, ok, nil
	}
	tc, ok := c.tool.(Toucher)
	if !ok {
		return Effects{}, false, nil
	}
	eff, err = tc.Touches(c.Raw)
	return eff, true, err
}

// Preview returns a Previewer's preview; ok is false for other tools.
func (c *Call) Preview(ctx context.Context, tr transport.Transport) (out Output, ok bool, err error) {
	if c.b != nil {
		return c.b.preview(ctx, tr)
	}
	pv, ok := c.tool.(Previewer)
	if !ok {
		return Output{}, false, nil
	}
	out, err = pv.Preview(ctx, tr, c.Raw)
	return out, true, err
}

// Run runs the tool with the decoded parameters: the Output and error of
// the tool's Run with Raw.
func (c *Call) Run(ctx context.Context, tr transport.Transport) (Output, error) {
	if c.b != nil {
		return c.b.run(ctx, tr)
	}
	return c.tool.Run(ctx, tr, c.Raw)
}
