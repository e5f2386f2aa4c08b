package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

// Limits of the terminal view: the full output is in --json and the audit
// log.
const (
	termOutputLines = 8
	termDiffLines   = 40
)

// termRenderer shows a run for a person: the plan, phase headers, each
// step's resolved command or file, its status and the head of its output,
// diffs of file changes, and a final summary with the undo hint.
type termRenderer struct {
	w       io.Writer
	host    string
	session string
	dryRun  bool
	changed int // files changed (steps with a diff that ran)
	multi   bool
	llm     *stepgen.LLMEvent // the model's usage, for the summary
}

func (r *termRenderer) printf(format string, a ...any) { fmt.Fprintf(r.w, format, a...) }

func (r *termRenderer) event(ev planner.Event) {
	switch ev := ev.(type) {
	case *planner.PlanEvent:
		r.host, r.session, r.dryRun = ev.Host, ev.Session, ev.DryRun
		r.multi = len(ev.Phases) > 1 || len(ev.Phases) == 1 && ev.Phases[0].Goal != ""
		steps := 0
		for _, p := range ev.Phases {
			steps += p.Steps
		}
		name := ev.Plan
		if name == "" {
			name = "plan"
		}
		mode := ""
		if ev.DryRun {
			mode = " — DRY RUN: only safe steps run"
		}
		if steps == 0 { // the model's plan: phases with goals, steps to come
			r.printf("%s on %s: %d %s%s\n", printable(name), printable(ev.Host), len(ev.Phases), pluralize(len(ev.Phases), "phase"), mode)
			for _, p := range ev.Phases {
				r.printf("  %d. %s\n", p.Phase, printable(oneLineText(p.Goal, 120)))
			}
			break
		}
		r.printf("%s on %s: %d %s, %d %s%s\n", printable(name), printable(ev.Host),
			len(ev.Phases), pluralize(len(ev.Phases), "phase"), steps, pluralize(steps, "step"), mode)
	case *planner.PhaseEvent:
		if r.multi {
			r.printf("\nPhase %d: %s\n", ev.Phase, printable(ev.Goal))
		}
	case *planner.StepEvent:
		r.step(ev)
	case *stepgen.ThoughtEvent:
		r.printf("  Thought: %s\n", printable(oneLineText(ev.Text, 200)))
	case *stepgen.AnswerEvent:
		lines, more := headLines(printable(ev.Text), termOutputLines)
		for i, l := range lines {
			prefix := "    "
			if i == 0 {
				prefix = "  → "
			}
			r.printf("%s%s\n", prefix, l)
		}
		if more > 0 {
			r.printf("    … %d more lines\n", more)
		}
	case *stepgen.ReplanEvent:
		r.printf("  Phase %d cannot succeed: %s — re-planning\n", ev.Phase, printable(oneLineText(ev.Reason, 160)))
	case *stepgen.LLMEvent:
		r.llm = ev
	}
}

func (r *termRenderer) step(ev *planner.StepEvent) {
	what := ""
	switch {
	case ev.Command != "":
		what = ev.Command
	case ev.Path != "":
		what = ev.Path
	default: // not resolved: skipped or failed before; show it as written
		for _, k := range []string{"command", "file_path", "condition", "remote_path"} {
			if v, ok := ev.Parameters[k].(string); ok {
				what = v
				break
			}
		}
	}
	r.printf("  [%d] %s", ev.Step, ev.Tool)
	if what != "" {
		r.printf(": %s", printable(oneLineText(what, 120)))
	}
	if ev.Description != "" {
		r.printf("  # %s", printable(oneLineText(ev.Description, 60)))
	}
	r.printf("\n")
	status := map[string]string{"ok": "ok", "error": "FAILED", "skipped": "skipped", "denied": "DENIED"}[ev.Status]
	if ev.DryRun {
		status = "not run (dry run)"
	}
	detail := fmt.Sprintf("%d ms", ev.DurationMS)
	if ev.Status == "ok" || ev.Status == "error" {
		detail = fmt.Sprintf("exit %d, %s", ev.ExitCode, detail)
	}
	if ev.Risk != "" && ev.Risk != "safe" {
		detail = ev.Risk + " risk, " + detail
	}
	r.printf("      %s (%s)\n", status, detail)
	if ev.Diff != "" && (ev.Status == "ok" || ev.DryRun) {
		if ev.Status == "ok" {
			r.changed++
		}
		r.block(ev.Diff, termDiffLines, "diff")
		if !ev.DryRun {
			return
		}
	}
	out := ev.Output
	if ev.DryRun && len(ev.Reasons) > 0 {
		out = "risk: " + strings.Join(ev.Reasons, "; ") + "\n" + out
	}
	r.block(out, termOutputLines, "output")
}

// block prints the head of text, indented.
func (r *termRenderer) block(text string, n int, what string) {
	lines, more := headLines(printable(text), n)
	for _, l := range lines {
		r.printf("      │ %s\n", l)
	}
	if more > 0 {
		r.printf("      │ … %d more %s lines (--json has all of it)\n", more, what)
	}
}

func (r *termRenderer) finish(sum planner.Summary) {
	status := "success"
	if !sum.Success {
		status = "FAILED"
	}
	r.printf("\n%s on %s: %s\n", status, printable(sum.Host), printable(sum.Text()))
	if r.llm != nil {
		r.printf("LLM: %d %s, %d prompt + %d completion tokens\n", r.llm.Calls, pluralize(r.llm.Calls, "call"),
			r.llm.PromptTokens, r.llm.CompletionTokens)
	}
	if sum.Session != "" {
		r.printf("session %s", sum.Session)
		if r.changed > 0 {
			r.printf(" — %d %s changed; to put %s back: agent undo %s", r.changed, pluralize(r.changed, "file"),
				pluralize(r.changed, "it", "them"), sum.Session)
		}
		r.printf("\n")
	}
}

// pluralize returns word for n == 1, else its plural (the second form when
// given, word+"s" otherwise).
func pluralize(n int, word string, plural ...string) string {
	if n == 1 {
		return word
	}
	if len(plural) > 0 {
		return plural[0]
	}
	return word + "s"
}

func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
