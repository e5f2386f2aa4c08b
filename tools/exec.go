package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autoshell/agent/transport"
)

// ExecuteCommandName is the name of the shell command tool.
const ExecuteCommandName = "execute_command"

// ShellParameters names, per tool, the parameters whose value is a shell
// command line run as it is: a {{ name }} in them becomes one shell-quoted
// word (execctx.Context.ResolveParams). Other tools quote their own.
var ShellParameters = map[string][]string{ExecuteCommandName: {"command"}}

// ExecuteCommandParams are execute_command's parameters.
type ExecuteCommandParams struct {
	Command string `json:"command" description:"Shell command line."`
	Cwd     string `json:"cwd,omitempty" description:"Working directory; default home."`
	Timeout int    `json:"timeout,omitempty" description:"Seconds; default 600."`
}

func (p *ExecuteCommandParams) check() error {
	if strings.TrimSpace(p.Command) == "" {
		return errors.New("command is empty")
	}
	if p.Timeout < 0 {
		return errors.New("timeout must be a positive number of seconds")
	}
	return nil
}

// ExecuteCommand runs a shell command line on the target.
type ExecuteCommand struct {
	base[ExecuteCommandParams]
	timeout time.Duration
}

// NewExecuteCommand returns execute_command (WithCommandTimeout applies).
func NewExecuteCommand(opts ...Option) *ExecuteCommand {
	return newExecuteCommand(newConfig(zeroPolicy, opts))
}

func newExecuteCommand(c *config) *ExecuteCommand {
	return &ExecuteCommand{
		base: newBase[ExecuteCommandParams](ExecuteCommandName,
			"Run a command on the target with /bin/sh -c; returns its output."),
		timeout: c.commandTimeout,
	}
}

// CommandLine returns the command as given, preceded by
// "cd -- <cwd> && " when cwd is set, so that risk classification and the
// approval prompt see the directory relative paths resolve against (Run
// itself sets the directory through transport.Command.Dir). A leading "~"
// or "~/" in cwd stays unquoted, as the shell expands it (quotePath).
func (t *ExecuteCommand) CommandLine(raw json.RawMessage) (string, error) {
	p, err := t.params(raw)
	if err != nil {
		return p.Command, err
	}
	return t.commandLine(p)
}

func (t *ExecuteCommand) commandLine(p ExecuteCommandParams) (string, error) {
	if p.Cwd == "" {
		return p.Command, nil
	}
	return "cd -- " + quotePath(operand(p.Cwd)) + " && " + p.Command, nil
}

// Run runs the command.
func (t *ExecuteCommand) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

func (t *ExecuteCommand) run(ctx context.Context, tr transport.Transport, p ExecuteCommandParams) (Output, error) {
	timeout := t.timeout
	if p.Timeout > 0 {
		timeout = time.Duration(p.Timeout) * time.Second
	}
	return runCommand(ctx, tr, transport.Command{Command: p.Command, Dir: p.Cwd, Timeout: timeout})
}

// runCommand runs cmd and turns its result into an Output: a timeout is a
// failed step showing what was captured, a lost connection or cancellation
// an error, any other failure to start (a missing cwd) a model-fixable
// error.
func runCommand(ctx context.Context, tr transport.Transport, cmd transport.Command) (Output, error) {
	res, err := tr.Run(ctx, cmd)
	switch {
	case err == nil:
		return CommandOutput(res), nil
	case errors.Is(err, transport.ErrTimeout) && ctx.Err() == nil:
		out := CommandOutput(res)
		msg := fmt.Sprintf("command timed out after %v and was killed", cmd.Timeout)
		out.Stderr = strings.TrimSuffix(out.Stderr, "\n")
		if out.Stderr != "" {
			out.Stderr += "\n"
		}
		out.Stderr += msg
		out.ExitCode = -1
		out.IsError = true
		out.Observation = observe(out.Stdout, out.Stderr, 0)
		return out, nil
	case infraError(ctx, err):
		return Output{}, fmt.Errorf("%s: %w", cmd.Command, err)
	}
	return ErrorOutput("%v", err), nil
}
