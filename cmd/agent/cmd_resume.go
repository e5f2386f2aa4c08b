package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
)

// resumeOptions are `agent resume`'s flags.
type resumeOptions struct {
	rerunUnknown, skipUnknown bool
	approve                   string
	json                      bool
	vars                      []string
}

// runResume is `agent resume [SESSION]`: the session's command runs again,
// in the directory it was given in, taking up where the record says it
// stopped — `agent run` from the first step that did not complete, with
// the variables saved so far; a batch on the hosts that did not finish;
// `agent -c` with its plan and what ran told to the model. A step that
// was running when agent stopped is shown and needs approval again.
func runResume(ctx context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("resume", pflag.ContinueOnError)
	var o resumeOptions
	fs.BoolVar(&o.rerunUnknown, "rerun-unknown", false, "run again, without asking, a step that was running when agent stopped (its outcome is unknown)")
	fs.BoolVar(&o.skipUnknown, "skip-unknown", false, "take a step that was running when agent stopped as done (you checked it completed)")
	fs.StringVar(&o.approve, "approve", "", "`MODE` for risky steps: ask, never, medium or all (default: as the session was started)")
	fs.BoolVar(&o.json, "json", false, "print one JSON event per line on stdout instead of the terminal view")
	fs.StringArrayVar(&o.vars, "var", nil, "give again a secret `k=v` the session was started with (its record leaves secret values out)")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent resume [SESSION] [flags]\n\nTake up an interrupted or failed session (default: the newest one), where it stopped.\n"+
			"Completed steps and finished hosts are not run again; agent sessions lists them.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	if len(a.given) > 0 {
		return usagef("resume: %s: the session is taken up with the flags it was started with (resume's own: --approve, --json, --var, --rerun-unknown, --skip-unknown)", strings.Join(a.given, ", "))
	}
	if o.rerunUnknown && o.skipUnknown {
		return usagef("resume: --rerun-unknown and --skip-unknown: choose one")
	}
	if fs.NArg() > 1 {
		return usagef("resume: want at most one SESSION")
	}
	dir, err := statedir.Dir()
	if err != nil {
		return err
	}
	id := fs.Arg(0)
	if id == "" {
		if id, err = newestUnfinished(dir); err != nil {
			return err
		}
	}
	s, err := session.Load(dir, id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return usagef("resume: %v (agent sessions lists them)", err)
	case errors.Is(err, session.ErrDamaged):
		return usagef("resume: %v; what ran after that line cannot be told, so the session is not resumed (start it again as a new one)", err)
	case err != nil:
		return usagef("resume: %v", err)
	}
	switch {
	case s.Info.State == session.StateRunning:
		return usagef("resume: session %s is still running (another agent holds it)", id)
	case !s.Info.Unfinished():
		return usagef("resume: session %s ended %s; nothing to resume", id, s.Info.State)
	case s.Start.DryRun:
		return usagef("resume: session %s was a dry run; run it again instead", id)
	}
	cmdArgs, err := resumeArgs(s.Start, o)
	if err != nil {
		return err
	}
	if wd, _ := os.Getwd(); s.Start.Dir != "" && wd != s.Start.Dir {
		if err := os.Chdir(s.Start.Dir); err != nil {
			return usagef("resume: the session ran in %s: %v", s.Start.Dir, err)
		}
	}
	fmt.Fprintf(a.stderr, "agent: resuming session %s: agent %s\n", id, printable(strings.Join(redactedArgs(cmdArgs), " ")))
	a.resume = &resumeState{Resume: engine.Resume{Session: s, RerunUnknown: o.rerunUnknown, SkipUnknown: o.skipUnknown}}
	a.resumeArgs = args
	a.given = nil
	return a.main(ctx, cmdArgs)
}

// newestUnfinished is the newest session agent resume can take up.
func newestUnfinished(dir string) (string, error) {
	list, err := session.List(dir)
	if err != nil {
		return "", err
	}
	for _, s := range list {
		if s.Unfinished() && s.Error == "" {
			return s.ID, nil
		}
	}
	return "", usagef("resume: no interrupted or failed session to resume (agent sessions lists them)")
}

// resumeArgs are the session's arguments again: the secret --var values
// given back, resume's --approve and --json after them (a later flag
// wins).
func resumeArgs(st session.Start, o resumeOptions) ([]string, error) {
	given := map[string]string{}
	for _, kv := range o.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef("--var %q: want name=value", kv)
		}
		if !slices.Contains(st.Redacted, k) {
			return nil, usagef("--var %s: the session was not started with a secret of that name (resume takes only those: %s)", k, orNone(st.Redacted))
		}
		given[k] = v
	}
	args := slices.Clone(st.Args)
	for i, arg := range args {
		prefix, kv := "", ""
		switch {
		case i > 0 && (args[i-1] == "--var" || args[i-1] == "--secret-var"):
			kv = arg
		case strings.HasPrefix(arg, "--var="):
			prefix, kv = "--var=", strings.TrimPrefix(arg, "--var=")
		case strings.HasPrefix(arg, "--secret-var="):
			prefix, kv = "--secret-var=", strings.TrimPrefix(arg, "--secret-var=")
		default:
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if v != redact.Redacted || !slices.Contains(st.Redacted, k) {
			continue
		}
		val, ok := given[k]
		if !ok {
			return nil, usagef("resume: the session was started with the secret --var %s, which its record leaves out: give it again (agent resume --var %s=…)", k, k)
		}
		args[i] = prefix + k + "=" + val
	}
	if o.approve != "" {
		args = append(args, "--approve", o.approve)
	}
	if o.json {
		args = append(args, "--json")
	}
	return args, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
