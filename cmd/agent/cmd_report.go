package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/event"
)

// runReport is `agent report FILE…`: the --json outputs of the parts of a
// run split with --shard (or of any batch runs) merged into one summary
// and one exit status — 0 when every host is ok, 3 when a host failed or
// did not run, 1 when a part did not finish (its result is not known), 2
// for a file that cannot be read as agent's --json.
func runReport(_ context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the merged result as JSON events (a host event per host, then a batch event)")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent report FILE… [--json]\n\nMerge the --json outputs of a batch run's parts (--shard K/N) into one summary.\n"+
			"A host in several files counts as the last file says (a retry).\n\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		usage(a.stderr)
		return usagef("report: give the --json output files of the parts")
	}
	var parts []*part
	for _, name := range fs.Args() {
		p, err := readPartFile(name)
		if err != nil {
			return usageError{err}
		}
		parts = append(parts, p)
	}
	r := mergeParts(parts)
	for _, n := range r.notes {
		fmt.Fprintln(a.stderr, "agent: report:", n)
	}
	if *asJSON {
		if err := r.writeJSON(a.stdout); err != nil {
			return err
		}
	} else {
		r.writeTable(a.stdout, len(parts))
	}
	switch {
	case len(r.incomplete) > 0:
		return exitError{code: exitFailed}
	case r.totals.OK != r.totals.Hosts:
		return exitError{code: exitSomeHosts}
	}
	return nil
}

func readPartFile(name string) (*part, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readPart(f, name)
}

func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, h := range r.hosts {
		end := r.result[h]
		if err := enc.Encode(event.Event{Kind: event.KindHost, Host: h, HostEnd: &end}); err != nil {
			return err
		}
	}
	tot := r.totals
	return enc.Encode(event.Event{Kind: event.KindBatch, Session: r.session(), Batch: &tot})
}

func (r *report) writeTable(w io.Writer, files int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSTATUS\tRUN\tSTEPS\tCHANGED\tDURATION\tERROR")
	for _, h := range r.hosts {
		e := r.result[h]
		how, steps, changed, dur := e.How, fmt.Sprint(e.Steps), fmt.Sprint(e.Changed), fmtDuration(time.Duration(e.DurationMS)*time.Millisecond)
		if e.Status == event.HostNotRun {
			how, steps, changed, dur = "-", "-", "-", "-"
		}
		if how == "" {
			how = "-"
		}
		status, ok := statusWord[e.Status]
		if !ok {
			status = printable(e.Status)
		}
		first, _ := errFirstLine(e.Err)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(h), status, printable(how), steps, changed, dur,
			printable(oneLineText(first, 100)))
	}
	tw.Flush()
	t := r.totals
	fmt.Fprintf(w, "\n%d %s: %d ok, %d failed, %d not run", t.Hosts, pluralize(t.Hosts, "host"), t.OK, t.Failed, t.NotRun)
	if t.LLMCalls > 0 {
		fmt.Fprintf(w, "; LLM: %d %s", t.LLMCalls, pluralize(t.LLMCalls, "call"))
	}
	fmt.Fprintf(w, " (from %d %s", files, pluralize(files, "file"))
	if n := len(r.incomplete); n > 0 {
		fmt.Fprintf(w, ", %d of them unfinished", n)
	}
	fmt.Fprintln(w, ")")
}
