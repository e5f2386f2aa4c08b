package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/transport"
)

// runExec runs the operator's own command line on the host and exits with
// its status, like `ssh host COMMAND`. It is the shell passthrough of the
// AgenticCLI spec: what a person typed is theirs, so no safety check applies;
// commands proposed by a model never take this path.
func runExec(ctx context.Context, a *app, args []string) error {
	switch {
	case len(args) > 0 && args[0] == "--":
		args = args[1:]
	case len(args) > 0 && isHelp(args[0]):
		fmt.Fprint(a.stdout, "Usage: agent [--ssh-host HOST] exec [--] COMMAND…\n\n"+
			"Run COMMAND on the host as typed (no model, no safety check) and exit with\n"+
			"its status, or 255 when it could not be run (connection, login, host key).\n"+
			"Host flags go before exec; put -- before a command that starts with -.\n")
		return pflag.ErrHelp
	case len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-':
		// A mistyped flag must never become a remote command.
		return usagef("exec: unknown flag %q (flags go before exec; put -- before a command that starts with -)", args[0])
	}
	if len(args) == 0 {
		return usagef("exec: no command given (agent [--ssh-host HOST] exec -- COMMAND…)")
	}
	if a.task.batch.inv.given() {
		return usagef("exec runs on one host (--ssh-host); for an inventory, put the command in a plan: agent run PLAN.yaml -i FILE")
	}
	t, err := a.open(ctx)
	if err != nil {
		if errors.As(err, new(usageError)) || ctx.Err() != nil {
			return err
		}
		// Like ssh: 255 when the command could not be run at all
		// (unreachable, refused, timed out, login or host key refused), so
		// a script can tell it from the command's own failure.
		return hostError{err}
	}
	defer t.Close()
	if t, err = a.execAs(ctx, t); err != nil {
		return err
	}
	res, err := t.Run(ctx, transport.Command{
		Command: strings.Join(args, " "), Stdin: stdinOrNil(a.stdin),
		Stdout: a.stdout, Stderr: a.stderr, // streamed in full, as with ssh
		CaptureLimit: 1, // nothing needs the capture
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return hostError{fmt.Errorf("exec on %s: %w", t.Host().Name, err)}
	}
	if res.ExitCode != 0 {
		return exitError{code: max(res.ExitCode, 1)}
	}
	return nil
}

// execAs is the host as the become user when --become (or the config
// file) says so: the operator's own command runs through sudo, as with
// `ssh host sudo …`.
func (a *app) execAs(ctx context.Context, t transport.Transport) (transport.Transport, error) {
	hb, err := a.hostBecome(ctx, engine.Target{})
	if err != nil || !hb.All {
		return t, err
	}
	return engine.BecomeTransport(t, hb)
}

// stdinOrNil passes piped input on to the command, but not an interactive
// terminal: a command that does not read it would otherwise wait for a line
// nobody types.
func stdinOrNil(r io.Reader) io.Reader {
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
			return nil
		}
	}
	return r
}
