package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/become"
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
			"Host flags go before exec; put -- before a command that starts with -.\n\n"+
			"       agent exec -i INVENTORY [--limit PAT] [--forks N] [run's flags] -- COMMAND…\n\n"+
			"Run COMMAND on every selected host as a one-step plan: the safety check,\n"+
			"approvals (--approve), audit, undo journal, --json, --out and the summary\n"+
			"of agent run; {{inventory_hostname}} and the hosts' variables are templated;\n"+
			"after exec, -i, --limit, --forks and the flags `agent run --help` lists.\n\n"+
			"Host flags (before exec):\n"+execHostFlags())
		return pflag.ErrHelp
	case len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-':
		// Flags, up to "--", are a fan-out's over an inventory (runExecBatch).
		// A mistyped flag must never become a remote command.
		i := slices.Index(args, "--")
		if i < 0 || !slices.ContainsFunc(args[:i], isInventoryFlag) && !a.task.batch.inv.given() {
			return usagef("exec: unknown flag %q (host flags go before exec; after it only an inventory's: exec -i INVENTORY [--limit PAT] [--forks N] -- COMMAND; put -- before a command that starts with -)", args[0])
		}
		if len(args[i+1:]) == 0 {
			return usagef("exec: no command given after --")
		}
		return runExecBatch(ctx, a, args[:i], args[i+1:])
	}
	if len(args) == 0 {
		return usagef("exec: no command given (agent [--ssh-host HOST] exec -- COMMAND…)")
	}
	if a.task.batch.inv.given() {
		return runExecBatch(ctx, a, nil, args)
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
	host := t.Host().Name
	if t, err = a.execAs(ctx, t); err != nil {
		return err
	}
	command := strings.Join(args, " ")
	log, ent, err := a.execAudit(ctx, host, command)
	if err != nil {
		return err
	}
	defer log.Close()
	start := time.Now()
	res, err := t.Run(ctx, transport.Command{
		Command: command, Stdin: stdinOrNil(a.stdin),
		Stdout: a.stdout, Stderr: a.stderr, // streamed in full, as with ssh
		CaptureLimit: 1, // nothing needs the capture
	})
	ent.Decision, ent.Duration = audit.Allowed, time.Since(start)
	if err != nil {
		ent.Error = err.Error()
	} else {
		code := res.ExitCode
		ent.ExitCode = &code
	}
	if aerr := log.Append(ctx, ent); aerr != nil {
		return errors.Join(err, fmt.Errorf("exec on %s: the command ran, but its audit line was not written: %w", host, aerr))
	}
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

// execAudit opens the audit log and writes the line of the operator's
// command about to run on host (no safety check rated it: risk
// "unchecked"); when it cannot be written the command must not run. It
// returns the log and the entry for the outcome line.
func (a *app) execAudit(ctx context.Context, host, command string) (*audit.Log, audit.Entry, error) {
	ent := audit.Entry{Session: statedir.NewSessionID(), Host: host, Tool: "exec", Command: command,
		Unchecked: true, Decision: audit.Started, By: safety.ByUser, Approval: "the operator's own command (agent exec: no safety check)"}
	if hb, err := a.hostBecome(ctx, engine.Target{}); err == nil && hb != nil && hb.All {
		ent.As = cmp.Or(hb.Config.User, become.DefaultUser)
	}
	path, err := statedir.AuditPath()
	if err != nil {
		return nil, ent, err
	}
	log, err := audit.Open(path)
	if err != nil {
		return nil, ent, fmt.Errorf("exec on %s: %w; the command was not run", host, err)
	}
	if err := log.AppendUnsynced(ctx, ent); err != nil {
		log.Close()
		return nil, ent, fmt.Errorf("exec on %s: %w; the command was not run", host, err)
	}
	return log, ent, nil
}

// execAs is the host as the become user when --become (or the config
// file) says so: the operator's own command runs through sudo, as with
// `ssh host sudo …`.
func (a *app) execAs(ctx context.Context, t transport.Transport) (transport.Transport, error) {
	hb, err := a.hostBecome(ctx, engine.Target{})
	if err != nil || !hb.All {
		return t, err
	}
	bt, err := engine.BecomeTransport(t, hb)
	if err != nil {
		return t, err
	}
	// sudo tried once, without the command's input, as a host's steps
	// are: a refusal is said before any input is read, and a sudo that
	// wants a terminal (requiretty) gets one from then on.
	if c, ok := bt.(interface{ Check(context.Context) error }); ok {
		if err := c.Check(ctx); err != nil {
			return t, hostError{fmt.Errorf("exec on %s: %w", t.Host().Name, err)}
		}
	}
	return bt, nil
}

// execHostFlags is the usage of the host flags exec takes before it.
func execHostFlags() string {
	fs := pflag.NewFlagSet("exec", pflag.ContinueOnError)
	var h hostOptions
	h.addFlags(fs)
	return fs.FlagUsages()
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
