package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/autoshell/agent/transport"
)

// shellTool is a structured tool: its parameters become an argv, each word
// quoted for the target's POSIX shell (Quote), never concatenated raw.
type shellTool[P any] struct {
	base[P]
	build   func(P) (string, error)
	timeout time.Duration
}

func newShellTool[P any](c *config, name, desc string, build func(P) (string, error)) *shellTool[P] {
	return &shellTool[P]{base: newBase[P](name, desc), build: build, timeout: c.commandTimeout}
}

// CommandLine returns the shell line Run runs.
func (t *shellTool[P]) CommandLine(raw json.RawMessage) (string, error) {
	p, err := t.params(raw)
	if err != nil {
		return "", err
	}
	return t.commandLine(p)
}

func (t *shellTool[P]) commandLine(p P) (string, error) {
	line, err := t.build(p)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return line, nil
}

// prepare decodes raw and builds the line once: a structured tool's
// parameters are valid when its line can be built, and the line is all
// that running it needs.
func (t *shellTool[P]) prepare(_ Tool, raw json.RawMessage) (binding, error) {
	line, err := t.CommandLine(raw)
	if err != nil {
		return nil, err
	}
	return &shellCall{line: line, timeout: t.timeout}, nil
}

// Run builds the command line and runs it.
func (t *shellTool[P]) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	line, err := t.CommandLine(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return shellCall{line: line, timeout: t.timeout}.run(ctx, tr)
}

// shellCall is a structured tool bound to the line its parameters built.
type shellCall struct {
	line    string
	timeout time.Duration
}

func (c shellCall) run(ctx context.Context, tr transport.Transport) (Output, error) {
	return runCommand(ctx, tr, transport.Command{Command: c.line, Timeout: c.timeout})
}

func (shellCall) preview(context.Context, transport.Transport) (Output, bool, error) {
	return Output{}, false, nil
}

func (c shellCall) commandLine() (string, bool, error) { return c.line, true, nil }

func (shellCall) touches() (Effects, bool) { return Effects{}, false }
