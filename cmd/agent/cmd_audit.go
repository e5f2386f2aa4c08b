package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/statedir"
)

// auditFilter is `agent audit`'s selection.
type auditFilter struct {
	host, principal, level, decision string
	since, until                     time.Time
}

func (f auditFilter) keep(r audit.Record) bool {
	if r.Event != "" {
		return false
	}
	t, _ := time.Parse(time.RFC3339Nano, r.Time)
	return (f.host == "" || r.Host == f.host) &&
		(f.principal == "" || strings.Contains(r.Principal, f.principal)) &&
		(f.level == "" || r.Risk == f.level) &&
		(f.decision == "" || r.Decision == f.decision) &&
		(f.since.IsZero() || !t.Before(f.since)) &&
		(f.until.IsZero() || t.Before(f.until))
}

// runAudit is `agent audit [FILE]` (the steps, filtered) and `agent audit
// verify [FILE…]` (the hash chain).
func runAudit(_ context.Context, a *app, args []string) error {
	if len(args) > 0 && args[0] == "verify" {
		return runAuditVerify(a, args[1:])
	}
	fs := pflag.NewFlagSet("audit", pflag.ContinueOnError)
	var f auditFilter
	var since, until string
	asJSON := fs.Bool("json", false, "print the selected records as JSON lines, as the log holds them")
	fs.StringVar(&f.host, "host", "", "only steps on `HOST`")
	fs.StringVar(&f.principal, "principal", "", "only steps whose principal contains `TEXT` (a user, an MCP client's name, a peer address)")
	fs.StringVar(&f.level, "level", "", "only steps of risk `LEVEL`: safe, medium, high, or unchecked (agent exec's own commands)")
	fs.StringVar(&f.decision, "decision", "", "only steps `DECIDED`: started, allowed, denied or skipped")
	fs.StringVar(&since, "since", "", "only steps at or after `TIME` (RFC 3339, a date, or a duration ago such as 2h)")
	fs.StringVar(&until, "until", "", "only steps before `TIME` (same forms)")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent audit [FILE] [--host H] [--principal P] [--level L] [--decision D] [--since T] [--until T] [--json]\n"+
			"       agent audit verify [FILE…]\n\nList the steps of the audit log (default: the state directory's audit.log), or check its hash chain.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("audit: at most one FILE (got %q)", fs.Args())
	}
	switch f.level {
	case "", "safe", "medium", "high", "unchecked":
	default:
		return usagef("--level %q: want safe, medium, high or unchecked", f.level)
	}
	switch f.decision {
	case "", audit.Started, audit.Allowed, audit.Denied, audit.Skipped:
	default:
		return usagef("--decision %q: want started, allowed, denied or skipped", f.decision)
	}
	var err error
	if f.since, err = parseWhen(since); err != nil {
		return usagef("--since: %v", err)
	}
	if f.until, err = parseWhen(until); err != nil {
		return usagef("--until: %v", err)
	}
	file, err := auditFile(fs.Args())
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "TIME\tPRINCIPAL\tHOST\tTOOL\tRISK\tDECISION\tEXIT\tCOMMAND OR PATH")
	}
	enc := json.NewEncoder(a.stdout)
	err = audit.Read(file, func(_ int, r audit.Record) error {
		if !f.keep(r) {
			return nil
		}
		if *asJSON {
			return enc.Encode(r)
		}
		exit := "-"
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		what := r.Command
		if what == "" {
			what = r.Path
		}
		if len(what) > 80 {
			what = strings.ToValidUTF8(what[:77], "") + "..."
		}
		host := r.Host
		if r.As != "" {
			host += " (as " + r.As + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Time), cell(r.Principal), cell(host), cell(r.Tool),
			cell(r.Risk), cell(r.Decision), exit, cell(what))
		return nil
	})
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// parseWhen reads --since/--until: RFC 3339, a date (UTC), or a duration
// before now.
func parseWhen(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not RFC 3339, YYYY-MM-DD or a duration such as 2h", s)
}

// auditFile is the file argument, else the state directory's log.
func auditFile(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	return statedir.AuditPath()
}

// runAuditVerify checks the chain of each file in order (rotated files
// before the one that follows them); exit 1 naming the first broken line.
func runAuditVerify(a *app, args []string) error {
	fs := pflag.NewFlagSet("audit verify", pflag.ContinueOnError)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent audit verify [FILE…]\n\nCheck the audit log's hash chain (default: the state directory's audit.log); several files\n"+
			"in order (oldest first) are also checked to follow each other. Exit 1 names the first broken line.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		f, err := auditFile(nil)
		if err != nil {
			return err
		}
		files = []string{f}
	}
	sums, err := audit.Verify(files...)
	var p *audit.Problem
	if errors.As(err, &p) {
		fmt.Fprintf(a.stderr, "agent audit verify: BROKEN: %s: line %d: %s\n", p.File, p.Line, p.Reason)
		return exitError{code: exitFailed}
	}
	if err != nil {
		return err
	}
	for _, s := range sums {
		note := ""
		if s.Previous != "" {
			note = fmt.Sprintf(", continues %s", s.Previous)
		}
		if s.HeadLags {
			note += " (its head file names an earlier line: written before a crash, or lines appended without it)"
		}
		fmt.Fprintf(a.stdout, "%s: chain intact: %d lines, records %d–%d%s; last hash %s\n", s.File, s.Lines, s.FirstSeq, s.LastSeq, note, s.LastHash)
	}
	return nil
}

// cell is s fit for one cell of agent audit's table: a line's fields
// come from MCP clients and models (a client's name, a command), so a
// newline, tab or control character in them must not start a row, shift
// a column or reach the terminal as an escape sequence; they are shown
// as ⏎, \t and \xHH.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	s = strings.ReplaceAll(s, "\t", `\t`)
	return printable(s)
}
