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
	line, err := t.build(p)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return line, nil
}

func (t *shellTool[P]) validate(raw json.RawMessage) error {
	_, err := t.CommandLine(raw)
	return err
}

// Run builds the command line and runs it.
func (t *shellTool[P]) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	line, err := t.CommandLine(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return runCommand(ctx, tr, transport.Command{Command: line, Timeout: t.timeout})
}
