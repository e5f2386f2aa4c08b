package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
)

// runSessions is `agent sessions`: the recorded sessions, newest first.
func runSessions(_ context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("sessions", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON array")
	n := fs.IntP("number", "n", 20, "show the newest `N` sessions (0: all)")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent sessions [--json] [-n N]\n\nList the recorded sessions, newest first: what ran where, how it ended, the model's usage.\n"+
			"agent resume [SESSION] takes up an interrupted or failed one.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("sessions: no arguments expected (got %q)", fs.Args())
	}
	if *n < 0 {
		return usagef("-n must be 0 or more")
	}
	_, fileLLM, err := a.loadConfig()
	if err != nil {
		return err
	}
	dir, err := statedir.Dir()
	if err != nil {
		return err
	}
	list, err := session.List(dir)
	if err != nil {
		return err
	}
	if *n > 0 && len(list) > *n {
		list = list[:*n]
	}
	for i := range list {
		if p, ok := fileLLM.PriceOf(list[i].Model); ok {
			c := p.Cost(list[i].PromptTokens, list[i].CompletionTokens)
			list[i].Cost = &c
		}
	}
	if *asJSON {
		if list == nil {
			list = []session.Info{}
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stdout, "no sessions recorded")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTARTED\tTARGET\tTASK/PLAN\tSTATE\tHOSTS ok/failed/pending\tLLM\tTOKENS\tCOST")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d/%d\t%d\t%d\t%s\n", s.ID, when(s.Started), printable(where(s)),
			printable(oneLineText(what(s), 40)), state(s), s.Hosts.Done, s.Hosts.Failed, s.Hosts.Pending,
			s.LLMCalls, s.Tokens(), cost(s.Cost))
	}
	return tw.Flush()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func where(s session.Info) string {
	if len(s.Inventory) > 0 {
		w := "-i " + strings.Join(s.Inventory, ",")
		if s.Limit != "" {
			w += " --limit " + s.Limit
		}
		return w
	}
	if s.Target == "" {
		return "-"
	}
	return s.Target
}

func what(s session.Info) string {
	if s.Kind == session.KindMCP {
		return "mcp: " + s.Client
	}
	if s.Plan != "" {
		return s.Plan
	}
	if s.Task != "" {
		return "-c " + s.Task
	}
	return "-"
}

func state(s session.Info) string {
	if s.Error != "" {
		return s.State + " (damaged)"
	}
	if s.Resumed > 0 {
		return fmt.Sprintf("%s (resumed %d×)", s.State, s.Resumed)
	}
	return s.State
}

func cost(c *float64) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *c)
}

// llmCost is the cost line of a run's summary: "" without a price.
func llmCost(file *llm.FileConfig, model string, prompt, completion int) string {
	p, ok := file.PriceOf(model)
	if !ok {
		return ""
	}
	return fmt.Sprintf(", cost %.4f", p.Cost(prompt, completion))
}
