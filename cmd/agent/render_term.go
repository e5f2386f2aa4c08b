package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"golang.org/x/term"
)

// Limits of the terminal view: the full output is in --json and the audit
// log.
const (
	termOutputLines = 8
	termDiffLines   = 40
)

// termRenderer shows a run for a person: the plan, phase headers, the
// model's thoughts, each step's resolved command or file before it runs,
// its status and the head of its output, diffs of file changes, and a final
// summary with the model's usage and the undo hint. On a terminal a spinner
// (spin) shows what it is waiting for and statuses are coloured (color);
// both are off in the zero value, e.g. for a batch host's log file.
type termRenderer struct {
	w       io.Writer
	spin    *spinner
	color   bool
	host    string
	session string
	dryRun  bool
	changed int             // files changed (steps with a diff that ran), each counted once
	paths   map[string]bool // the files counted in changed
	shell   []string        // medium/high risk shell commands that ran (not journaled): "step N: COMMAND"
	multi   bool
	started int        // the step whose header step_start printed
	llm     *event.LLM // the model's usage, for the summary
	// cost prices the usage (", cost 0.0123"); nil or "": no price.
	cost func(prompt, completion int) string
	// afterStep is the spinner's label between a step and what follows
	// ("Observing…" in a task: the model is next; "" in a plan).
	afterStep string
	// full: every line a command prints is written as it arrives (an --out
	// log keeps all of it), and not again under the step's status; the
	// spinner's live tail is for the terminal. streamed is the step whose
	// output was written, open its last line when it has no newline yet.
	full     bool
	streamed int
	open     string
}

// newTermRenderer renders on stdout, with colours when stdout is a
// terminal and NO_COLOR is unset. The spinner is added by whoever also
// stops it around approval questions (taskRunner: quietPrompter).
func newTermRenderer(stdout io.Writer) *termRenderer {
	return &termRenderer{w: stdout, color: useColor(stdout)}
}

// useColor follows https://no-color.org: colours only on a terminal, and
// never when NO_COLOR is set to anything or TERM is dumb.
func useColor(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) || os.Getenv("TERM") == "dumb" {
		return false
	}
	_, set := os.LookupEnv("NO_COLOR")
	return !set
}

// SGR codes used by paint.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
)

// paint wraps text in an SGR colour when colours are on.
func (r *termRenderer) paint(code, text string) string {
	if !r.color || text == "" {
		return text
	}
	return "\033[" + code + "m" + text + "\033[0m"
}

func (r *termRenderer) printf(format string, a ...any) {
	r.spin.hide(func() { fmt.Fprintf(r.w, format, a...) })
}

func (r *termRenderer) event(e event.Event) {
	switch e.Kind {
	case event.KindPlan:
		ev := e.Plan
		r.host, r.session, r.dryRun = e.Host, e.Session, ev.DryRun
		r.multi = len(ev.Phases) > 1 || len(ev.Phases) == 1 && ev.Phases[0].Goal != ""
		steps := 0
		for _, p := range ev.Phases {
			steps += p.Steps
		}
		name := ev.Name
		if name == "" {
			name = "plan"
		}
		mode := ""
		if ev.DryRun {
			mode = " — DRY RUN: only safe steps run"
		}
		if steps == 0 { // the model's plan: phases with goals, steps to come
			r.printf("%s on %s: %d %s%s\n", r.paint(sgrBold, printable(name)), printable(e.Host), len(ev.Phases), pluralize(len(ev.Phases), "phase"), mode)
			for _, p := range ev.Phases {
				r.printf("  %d. %s\n", p.Phase, printable(oneLineText(p.Goal, 120)))
			}
			break
		}
		r.printf("%s on %s: %d %s, %d %s%s\n", printable(name), printable(e.Host),
			len(ev.Phases), pluralize(len(ev.Phases), "phase"), steps, pluralize(steps, "step"), mode)
	case event.KindPhase:
		ev := e.Phase
		if r.multi {
			r.printf("\n%s\n", r.paint(sgrBold, fmt.Sprintf("Phase %d: %s", ev.Phase, printable(ev.Goal))))
		}
	case event.KindStepStart:
		ev := e.StepStart
		r.header(ev.Step, ev.Tool, ev.Command, ev.Path, ev.Parameters, ev.Description)
		r.started = ev.Step
		if ev.Tool == "upload_file" || ev.Tool == "download_file" {
			r.spin.set("") // a large transfer draws its own progress bar
		} else {
			r.spin.set("Executing…")
		}
	case event.KindOutput:
		r.output(e.Output)
	case event.KindStep:
		r.step(e.Step)
		r.spin.set(r.afterStep)
	case event.KindThought:
		ev := e.Thought
		r.printf("  %s %s\n", r.paint(sgrCyan, "Thought:"), r.paint(sgrDim, printable(oneLineText(ev.Text, 200))))
	case event.KindAnswer:
		ev := e.Answer
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
	case event.KindReplan:
		ev := e.Replan
		r.printf("  Phase %d cannot succeed: %s — re-planning\n", ev.Phase, printable(oneLineText(ev.Reason, 160)))
	case event.KindLLM:
		r.llm = e.LLM
	}
}

// output shows a running command's output: in full (an --out log), or
// its last lines live under the step line on a terminal.
func (r *termRenderer) output(o *event.Output) {
	if !r.full {
		r.spin.output(o.Data)
		return
	}
	r.streamed = o.Step
	text := r.open + o.Data
	r.open = ""
	if i := strings.LastIndexByte(text, '\n'); i < len(text)-1 {
		text, r.open = text[:i+1], text[i+1:]
	}
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			r.printf("      │ %s\n", printable(strings.TrimSuffix(l, "\n")))
		}
	}
}

// header prints a step's first line: its tool and the resolved command or
// file (before it runs, from step_start), or as written when it never got
// that far.
func (r *termRenderer) header(step int, tool, command, path string, params map[string]any, desc string) {
	what := ""
	switch {
	case command != "":
		what = command
	case path != "":
		what = path
	default: // not resolved: skipped or failed before; show it as written
		for _, k := range []string{"command", "file_path", "condition", "remote_path"} {
			if v, ok := params[k].(string); ok {
				what = v
				break
			}
		}
	}
	line := fmt.Sprintf("  [%d] %s", step, tool)
	if what != "" {
		line += ": " + printable(oneLineText(what, 120))
	}
	if desc != "" {
		line += r.paint(sgrDim, "  # "+printable(oneLineText(desc, 60)))
	}
	r.printf("%s\n", line)
}

func (r *termRenderer) step(ev *event.Step) {
	if r.started != ev.Step {
		r.header(ev.Step, ev.Tool, ev.Command, ev.Path, ev.Parameters, ev.Description)
	}
	r.started = 0
	streamed := r.full && r.streamed == ev.Step
	if streamed && r.open != "" {
		r.printf("      │ %s\n", printable(r.open))
	}
	r.streamed, r.open = 0, ""
	status := map[string]string{"ok": "ok", "error": "FAILED", "skipped": "skipped", "denied": "DENIED"}[ev.Status]
	if ev.DryRun {
		status = "not run (dry run)"
	}
	if ev.Interrupted {
		status = "interrupted"
	}
	status = r.paint(map[string]string{"ok": sgrGreen, "error": sgrRed, "denied": sgrYellow, "skipped": sgrDim}[ev.Status], status)
	detail := fmt.Sprintf("%d ms", ev.DurationMS)
	if (ev.Status == "ok" || ev.Status == "error") && !ev.Interrupted {
		detail = fmt.Sprintf("exit %d, %s", ev.ExitCode, detail)
	}
	if ev.Risk != "" && ev.Risk != "safe" {
		detail = ev.Risk + " risk, " + detail
	}
	r.printf("      %s (%s)\n", status, detail)
	if shellChange(ev) {
		r.shell = append(r.shell, fmt.Sprintf("step %d: %s", ev.Step, printable(oneLineCmd(ev.Command, 120))))
	}
	if ev.Status == "ok" || ev.Status == "error" {
		for _, p := range ev.Journaled { // a shell command's files undo restores
			if !r.paths[p] {
				if r.paths == nil {
					r.paths = map[string]bool{}
				}
				r.paths[p] = true
				r.changed++
			}
		}
	}
	if ev.Diff != "" && (ev.Status == "ok" || ev.DryRun) {
		if ev.Status == "ok" && !r.paths[ev.Path] {
			if r.paths == nil {
				r.paths = map[string]bool{}
			}
			r.paths[ev.Path] = true // edited twice is one file to put back
			r.changed++
		}
		r.block(ev.Diff, termDiffLines, "diff")
		if !ev.DryRun {
			return
		}
	}
	out := ev.Output
	if ev.Interrupted {
		out = interruptedOutput(out)
	}
	if ev.DryRun && len(ev.Reasons) > 0 {
		out = "risk: " + strings.Join(ev.Reasons, "; ") + "\n" + out
	}
	if streamed { // written above as it came; only what the executor added
		out = afterOutput(ev.Output)
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

func (r *termRenderer) finish(sum executor.Summary) {
	r.finishText(sum.Host, sum.Session, sum.Success, sum.Text())
}

// finishText is finish from a done event: the host, the session, whether
// it succeeded and the one-line count of its steps.
func (r *termRenderer) finishText(host, session string, success bool, text string) {
	sum := struct{ Session string }{session}
	r.spin.set("")
	status := r.paint(sgrGreen, "success")
	if r.dryRun {
		// Only safe steps ran: say so rather than "success" (issue 29).
		status = r.paint(sgrGreen, "dry run: nothing changed")
	}
	if !success {
		status = r.paint(sgrRed, "FAILED")
	}
	r.printf("\n%s on %s: %s\n", status, printable(host), printable(text))
	if r.llm != nil {
		c := ""
		if r.cost != nil {
			c = r.cost(r.llm.PromptTokens, r.llm.CompletionTokens)
		}
		r.printf("LLM: %d %s, %d prompt + %d completion tokens%s\n", r.llm.Calls, pluralize(r.llm.Calls, "call"),
			r.llm.PromptTokens, r.llm.CompletionTokens, c)
	}
	if sum.Session != "" {
		r.printf("session %s", sum.Session)
		if r.changed > 0 {
			r.printf(" — %d %s changed; to put %s back: agent undo %s", r.changed, pluralize(r.changed, "file"),
				pluralize(r.changed, "it", "them"), sum.Session)
		}
		if n := len(r.shell); n > 0 {
			r.printf("\n%s (%d %s):", notJournaled, n, pluralize(n, "command"))
			for _, c := range r.shell {
				r.printf("\n  %s", c)
			}
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

// spinnerFrames are drawn in turn while the agent waits.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

const spinnerTick = 100 * time.Millisecond

// spinner shows what the agent is waiting for ("Thinking…" during a model
// call, "Executing…" while a step runs, "Observing…" after it) on one line
// of a terminal, with the seconds spent. Everything else printed while it
// runs goes through hide, which erases the line first, so the spinner never
// mixes with real output. A nil *spinner does nothing: no terminal, no
// spinner.
type spinner struct {
	w      io.Writer
	mu     sync.Mutex
	label  string
	since  time.Time
	frame  int
	shown  bool
	ticker *time.Ticker
	done   chan struct{}
	// tail is the last lines a running command printed, drawn above the
	// spinner's line (open: its last line, still without a newline);
	// drawn is how many lines are on screen above it; width bounds each
	// line so that none wraps.
	tail  []string
	open  string
	drawn int
	width int
}

// spinnerTail is how many of a running command's last lines the
// terminal shows under its step line.
const spinnerTail = 5

// newSpinner returns a spinner drawing on w, or nil when w is not a
// terminal (or TERM is dumb): pipes and log files never get one.
func newSpinner(w io.Writer) *spinner {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	width := 80
	if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
		width = cols
	}
	return &spinner{w: w, width: width}
}

// output adds what a running command printed to the lines shown above the
// spinner; they go when the label changes (the step ended).
func (s *spinner) output(data string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.open + data
	lines := strings.Split(text, "\n")
	s.open = lines[len(lines)-1]
	if len(s.open) > 4096 {
		s.open = s.open[len(s.open)-4096:]
	}
	for _, l := range lines[:len(lines)-1] {
		s.tail = append(s.tail, l)
	}
	if n := len(s.tail) - spinnerTail; n > 0 {
		s.tail = append(s.tail[:0], s.tail[n:]...)
	}
	if s.label != "" {
		s.draw()
	}
}

// set shows label ("" stops the spinner and erases its line). The clock
// restarts when the label changes.
func (s *spinner) set(label string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if label == s.label {
		return
	}
	s.label, s.since = label, time.Now()
	s.tail, s.open = nil, ""
	if label == "" {
		s.erase()
		if s.done != nil {
			close(s.done)
			s.ticker.Stop()
			s.done, s.ticker = nil, nil
		}
		return
	}
	s.draw()
	if s.done == nil {
		s.done, s.ticker = make(chan struct{}), time.NewTicker(spinnerTick)
		go s.run(s.done, s.ticker.C)
	}
}

// current is the label shown, "" when stopped.
func (s *spinner) current() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.label
}

func (s *spinner) run(done chan struct{}, tick <-chan time.Time) {
	for {
		select {
		case <-done:
			return
		case <-tick:
			s.mu.Lock()
			if s.label != "" {
				s.frame = (s.frame + 1) % len(spinnerFrames)
				s.draw()
			}
			s.mu.Unlock()
		}
	}
}

// draw writes the running command's last lines and the spinner line;
// s.mu is held.
func (s *spinner) draw() {
	var b strings.Builder
	s.clear(&b)
	lines := s.tail
	if s.open != "" {
		lines = append(lines[:len(lines):len(lines)], s.open)
		if len(lines) > spinnerTail {
			lines = lines[1:]
		}
	}
	for _, l := range lines {
		b.WriteString("      │ " + clipRunes(printable(strings.TrimSuffix(l, "\r")), s.width-10) + "\n")
	}
	s.drawn = len(lines)
	secs := int(time.Since(s.since).Seconds())
	b.WriteString(spinnerFrames[s.frame] + " " + s.label)
	if secs > 0 {
		fmt.Fprintf(&b, " %ds", secs)
	}
	fmt.Fprint(s.w, b.String())
	s.shown = true
}

// clear erases the spinner line and the lines drawn above it; s.mu is
// held.
func (s *spinner) clear(b *strings.Builder) {
	if !s.shown {
		return
	}
	b.WriteString("\r\033[K")
	for range s.drawn {
		b.WriteString("\033[1A\033[K")
	}
	s.drawn = 0
	s.shown = false
}

// erase clears what the spinner drew; s.mu is held.
func (s *spinner) erase() {
	var b strings.Builder
	s.clear(&b)
	if b.Len() > 0 {
		fmt.Fprint(s.w, b.String())
	}
}

// clipRunes cuts s to n runes, marking the cut with "…".
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n && n > 1 {
		return string(r[:n-1]) + "…"
	}
	return s
}

// hide erases the spinner while f prints; it comes back at the next tick.
func (s *spinner) hide(f func()) {
	if s == nil {
		f()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	f()
}

// thinkingChatter shows "Thinking…" while a model call is under way.
type thinkingChatter struct {
	next planner.Chatter
	spin *spinner
}

func (c thinkingChatter) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	c.spin.set("Thinking…")
	defer c.spin.set("")
	return c.next.Chat(ctx, req)
}

// quietPrompter stops the spinner while a person is asked, and puts it
// back after.
type quietPrompter struct {
	next safety.Prompter
	spin *spinner
}

func (p quietPrompter) Approve(ctx context.Context, req safety.Request) (safety.Decision, error) {
	prev := p.spin.current()
	p.spin.set("")
	defer p.spin.set(prev)
	return p.next.Approve(ctx, req)
}

// afterOutput is what a streamed step's observation adds to the output
// already written as it came: the tool's and the executor's notes (a
// timeout, a warning), not the command's own lines again.
func afterOutput(obs string) string {
	var notes []string
	for _, l := range strings.Split(obs, "\n") {
		l = strings.TrimPrefix(l, "[ERROR]: ")
		if strings.HasPrefix(l, "[warning: ") || strings.HasPrefix(l, "command timed out after ") {
			notes = append(notes, l)
		}
	}
	return strings.Join(notes, "\n")
}

// oneLineCmd is a command line on one line, shortened to n runes.
func oneLineCmd(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
