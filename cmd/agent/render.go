package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
)

// renderer shows a run's events: as JSON lines (--json) or for a person.
type renderer interface {
	event(ev event.Event)
	// finish is called once after the run with its summary.
	finish(sum executor.Summary)
}

func newRenderer(a *app, asJSON bool) renderer {
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		return &jsonRenderer{enc: enc, stderr: a.stderr}
	}
	return newTermRenderer(a.stdout)
}

// jsonRenderer prints one JSON object per event on stdout and nothing
// else there.
type jsonRenderer struct {
	enc    *json.Encoder
	stderr io.Writer
	failed bool
}

func (r *jsonRenderer) event(ev event.Event) {
	switch ev.Kind {
	case event.KindHost, event.KindWarning:
		return // not part of the --json stream
	case event.KindStep:
		if ev.Step.Interrupted {
			c := *ev.Step
			c.Output = interruptedOutput(c.Output)
			ev.Step = &c
		}
	}
	if err := r.enc.Encode(ev); err != nil && !r.failed {
		r.failed = true
		fmt.Fprintf(r.stderr, "agent: write %s event: %v\n", ev.Kind, err)
	}
}

func (r *jsonRenderer) finish(executor.Summary) {}

// notJournaled is the summary's note after a run whose shell commands may
// have changed things undo does not know of.
const notJournaled = "changes made by these shell commands are not journaled and cannot be undone"

// shellChange reports whether ev is a medium or high risk execute_command
// that ran and whose changes undo may not put back: a high one, or a
// medium one whose files were not journaled (a medium command's journaled
// files are all it changes).
func shellChange(ev *event.Step) bool {
	return ev.Tool == "execute_command" && (ev.Risk == "high" || ev.Risk == "medium" && len(ev.Journaled) == 0) && !ev.DryRun &&
		(ev.Status == "ok" || ev.Status == "error")
}

// interruptedOutput is the output of a step stopped by Ctrl-C, with the
// Go error that stopped it ("[ERROR]: …: context canceled") said as
// "[interrupted]"; what the step printed before is kept.
func interruptedOutput(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "[ERROR]: ") && strings.HasSuffix(l, context.Canceled.Error()) {
			lines[i] = "[interrupted]"
		}
	}
	return strings.Join(lines, "\n")
}

// printable escapes what a terminal would not print as itself (escape
// sequences, carriage returns, bidi overrides), keeping newlines and tabs:
// hostile command output must not rewrite the screen.
func printable(s string) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case c == '\n' || c == '\t' || c == ' ' || unicode.IsPrint(c):
			b.WriteRune(c)
		case c < 0x80:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
	}
	return b.String()
}

// headLines returns the first n lines of s and how many were left out.
func headLines(s string, n int) ([]string, int) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil, 0
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return lines, 0
	}
	return lines[:n], len(lines) - n
}
