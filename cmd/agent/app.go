package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/redact"
	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes (DESIGN.md).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitSomeHosts   = 3 // batch: some hosts failed
	exitDenied      = 4 // a step needed approval that could not be given
	exitInterrupted = 130
	exitNoHost      = 255 // agent exec: the command could not be run (like ssh)
)

// usageError marks a mistake in the command line or configuration: nothing ran.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitError carries an exit status chosen by a command (e.g. a remote
// command's own status for `agent exec`).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// hostError marks a connection, login or host key failure of `agent exec`:
// it exits 255 like ssh, apart from the remote command's own statuses.
type hostError struct{ err error }

func (e hostError) Error() string { return e.err.Error() }
func (e hostError) Unwrap() error { return e.err }

// app holds what every sub-command shares: the streams and global options.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	host           hostOptions
	config         string // --config: the config file
	task           taskOptions
	// requireEnforcement: --require-enforcement, over the policy's
	// require_enforcement.
	requireEnforcement bool
	// ephemeral: --ephemeral, over the policy's ephemeral_launcher;
	// keepLauncher: --keep-launcher, the default, accepted (refused with
	// --ephemeral).
	ephemeral, keepLauncher bool
	// sandbox: --sandbox[=MODE], --allow-write, --allow-net, over the
	// policy's sandbox section.
	sandbox sandboxFlags
	// batchFlags are the batch flags given before the command (--limit,
	// --forks, --plan-once, --out), for batchWithoutInventory.
	batchFlags []string
	// onInterrupt, when set, gets each Ctrl-C (SIGINT) first; returning
	// true means it was handled and agent goes on (the REPL cancels the
	// running task). Otherwise, and for SIGTERM, everything is cancelled.
	onInterrupt atomic.Pointer[func() bool]
	// args are agent's arguments (the session record keeps them);
	// resume, with resumeArgs, is set by agent resume (cmd_resume.go).
	args       []string
	resume     *resumeState
	resumeArgs []string
	// given are the global flags given before the command.
	given []string
	// secrets is the run's secret set (secretSet); secretVarNames the
	// names --secret-var gave.
	secrets        *redact.Set
	secretsOnce    sync.Once
	secretVarNames []string
}

type command struct {
	name, args, summary string
	run                 func(ctx context.Context, a *app, args []string) error
	flags               func(fs *pflag.FlagSet)
}

func commands() []command {
	return []command{
		{name: "exec", args: "[--ssh-host HOST] -- COMMAND…", summary: "run a shell command on the host as you typed it (no LLM, no safety check: it is yours)", run: runExec},
		{name: "run", args: "PLAN.yaml [--ssh-host HOST | -i INVENTORY [--limit PAT] [--forks N] [--out DIR]] [--var k=v]… [--dry-run] [--json] [--approve MODE]", summary: "run a saved plan's steps on the host or on every inventory host, with the safety checks (no LLM)", run: runRun},
		{name: "sessions", args: "[--json] [-n N]", summary: "list the recorded sessions: what ran where, how it ended (done, failed, interrupted), hosts, model calls, tokens and cost", run: runSessions},
		{name: "resume", args: "[SESSION] [--rerun-unknown | --skip-unknown] [--approve MODE] [--json]", summary: "take up an interrupted or failed session (default: the newest) where it stopped", run: runResume},
		{name: "undo", args: "[SESSION] [--ssh-host HOST | -i INVENTORY [--limit PAT]] [--force]", summary: "put back the files a session (default: the newest) changed, on the host or on each inventory host it touched", run: runUndo},
		{name: "mcp", args: "[-i INVENTORY [--limit PAT]] [--approve MODE] [--http ADDR]", summary: "serve agent's safe remote tools to an MCP client (Claude Code, Codex, …) on stdio or HTTP", run: runMCP},
		{name: "audit", args: "[FILE] [--host H] [--principal P] [--level L] [--since T] [--json] | verify [FILE…]", summary: "list the audit log's steps (who, where, what, approved how), or check its hash chain", run: runAudit},
		{name: "report", args: "FILE… [--json]", summary: "merge the --json outputs of a batch run's parts (--shard K/N) into one summary and exit status", run: runReport},
		{name: "inventory", args: "list -i FILE [--limit PATTERN] [--shard K/N] [--json]", summary: "print an inventory's selected hosts with their groups and connection settings", run: runInventory},
		{name: "config", args: "set-llm | show", summary: "set up the model endpoint, or print the effective configuration (key masked)", run: runConfig},
		{name: "completion", args: "bash|zsh|fish", summary: "print a completion script for the shell (sub-commands, flags, hosts from ~/.ssh/config and -i)", run: runCompletion},
		{name: "ssh-config", args: "HOST", summary: "print the SSH settings agent uses for HOST, in the format of `ssh -G`", run: runSSHConfig},
		{name: "version", summary: "print the version", run: func(_ context.Context, a *app, _ []string) error {
			fmt.Fprintln(a.stdout, "agent", version)
			return nil
		}},
	}
}

// Main runs agent with args and returns the process exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	keepInheritedFromSteps()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-ctx.Done():
				// A second Ctrl-C while agent cleans up (killing remote
				// processes, printing a batch summary) quits at once.
				signal.Stop(sigs)
				return
			case s := <-sigs:
				// The REPL takes Ctrl-C for the running task only.
				if h := a.onInterrupt.Load(); s == os.Interrupt && h != nil && (*h)() {
					continue
				}
				cancel()
			}
		}
	}()
	err := a.main(ctx, args)
	code := exitCode(ctx, err)
	switch {
	case err == nil || errors.As(err, new(exitError)) || errors.Is(err, pflag.ErrHelp):
	case code == exitInterrupted: // not "context canceled"
		fmt.Fprintln(stderr, "agent: interrupted")
	default:
		fmt.Fprintln(stderr, "agent:", err)
	}
	return code
}

func exitCode(ctx context.Context, err error) int {
	var ee exitError
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return exitOK
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, new(hostError)):
		return exitNoHost
	case errors.As(err, new(usageError)), errors.As(err, new(engine.ConfigError)):
		return exitUsage
	default:
		return exitFailed
	}
}

func (a *app) main(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	showVersion := fs.Bool("version", false, "print the version and exit")
	a.host.addFlags(fs)
	fs.StringVar(&a.config, "config", "", "read settings from `FILE` (default $XDG_CONFIG_HOME/agent/config.yaml)")
	a.task.addFlags(fs)
	addEnforcementFlags(fs, a)
	a.sandbox.add(fs)
	if err := a.parseFlags(fs, args, func(w io.Writer) { a.usage(w, fs) }); err != nil {
		if strings.Contains(err.Error(), "unknown flag: --var") {
			return usagef("unknown flag: --var (--var belongs to run: agent run PLAN.yaml --var k=v)")
		}
		return err
	}
	if *showVersion {
		fmt.Fprintln(a.stdout, "agent", version)
		return nil
	}
	a.batchFlags = changedBatchFlags(fs)
	mergeBecome(&a.host.become, a.host.become, fs) // records the global become flags given
	a.given = nil
	fs.Visit(func(f *pflag.Flag) { a.given = append(a.given, "--"+f.Name) })
	if fs.Changed("command") || fs.NArg() == 0 {
		if err := batchWithoutInventory(a.task.batch, a.batchFlags); err != nil {
			return err
		}
	}
	if fs.Changed("command") {
		if fs.NArg() > 0 {
			return usagef("-c TASK takes no command or arguments (got %q); quote the task", fs.Args())
		}
		if a.task.task == "" {
			return usagef("-c: the task is empty")
		}
		return runTask(ctx, a, a.task)
	}
	if fs.NArg() == 0 {
		return runREPL(ctx, a, a.task)
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" { // agent help [COMMAND]
		if len(rest) == 0 {
			a.usage(a.stdout, fs)
			return nil
		}
		if len(rest) > 1 {
			return usagef("help: want at most one COMMAND")
		}
		name, rest = rest[0], []string{"--help"}
	}
	for _, c := range commands() {
		if c.name == name {
			if given := a.task.limits.given(); len(given) > 0 && name != "run" && name != "mcp" {
				// agent exec is the operator's own command; undo, report,
				// inventory, config and ssh-config run no step.
				return usagef("%s: %s do(es) not apply to agent %s (they limit the steps of -c, the REPL, run and mcp)",
					name, strings.Join(given, ", "), name)
			}
			return c.run(ctx, a, rest)
		}
	}
	return usagef("unknown command %q (see agent --help)", name)
}

// changedBatchFlags lists the batch flags given in fs.
func changedBatchFlags(fs *pflag.FlagSet) []string {
	var out []string
	for _, name := range []string{"limit", "forks", "plan-once", "out", "shard"} {
		if fs.Lookup(name) != nil && fs.Changed(name) {
			out = append(out, "--"+name)
		}
	}
	return out
}

// batchWithoutInventory refuses batch flags without -i: they would be
// silently ignored, and `agent --limit web -c "restart nginx"` would run
// on this machine.
func batchWithoutInventory(b batchOptions, given []string) error {
	if b.inv.given() || len(given) == 0 {
		return nil
	}
	return usagef("%s: batch flags need -i INVENTORY; without it the run would be on one host, ignoring them", strings.Join(given, ", "))
}

// parseFlags parses a command's flags. Help that was asked for (-h,
// --help) goes to stdout and returns pflag.ErrHelp (exit 0); a mistake
// is a usage error (exit 2) saying it and naming --help, without the
// usage.
func (a *app) parseFlags(fs *pflag.FlagSet, args []string, usage func(w io.Writer)) error {
	fs.SetOutput(io.Discard) // Main prints the error once
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		usage(a.stdout)
		return err
	case err != nil:
		// The mistake and where the flags are, not the whole usage
		// before it (issue 29: 60 lines hid the one that mattered).
		cmd := "agent"
		if fs.Name() != "agent" {
			cmd += " " + fs.Name()
		}
		return usageError{fmt.Errorf("%w\n(`%s --help` lists the flags)", err, cmd)}
	}
	return nil
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" }

func (a *app) usage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: agent [flags] -c TASK\n       agent [flags] COMMAND [args]\n       agent [flags]   (REPL: the Agent > prompt)\n       agent help [COMMAND]\n\n"+
		"REPL: at a terminal, Ctrl-C stops the running task and exit, quit or Ctrl-D leave with\n"+
		"status 0. Tasks read from a pipe or file run as a script: Ctrl-C ends it (130), and the\n"+
		"status is 1 when a task failed, else 4 when a step needed approval, else 0.\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nEach command has its own flags (agent COMMAND --help): --var k=v belongs to\n"+
		"run, and the host flags below may also follow the command.\n\nFlags:\n%s", fs.FlagUsages())
}

// addEnforcementFlags adds --require-enforcement, --ephemeral and
// --keep-launcher to fs.
func addEnforcementFlags(fs *pflag.FlagSet, a *app) {
	fs.BoolVar(&a.requireEnforcement, "require-enforcement", a.requireEnforcement, "refuse steps nobody approved on a host whose kernel cannot confine them (no Landlock), instead of trusting the classifier alone")
	fs.BoolVar(&a.ephemeral, "ephemeral", a.ephemeral, "send the kernel's launcher to SSH hosts for each run and remove it at the end, instead of keeping it in agent's state directory there")
	fs.BoolVar(&a.keepLauncher, "keep-launcher", a.keepLauncher, "keep the kernel's launcher on SSH hosts between runs (the default; the opposite of --ephemeral)")
}
