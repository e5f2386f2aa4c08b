package execctx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Summary sizes.
const (
	DefaultSummaryBudget = 8 << 10 // bytes, when Summary is given budget <= 0
	RecentSteps          = 5       // the newest steps shown in full
	oneLineMax           = 160     // bytes of an older step's line
	varLineMax           = 200     // bytes of a variable's line
	paramsMax            = 300     // bytes of a full step's parameters
)

// Summary describes the run for the LLM in at most budget bytes
// (DefaultSummaryBudget when budget <= 0): the newest RecentSteps steps in
// full with their output clipped, older steps one line each — as many as
// fit, newest kept, with a count of those left out — then the variables
// (sorted; `last` is the newest step) and the files accessed. The text is
// deterministic and its size does not grow with the history.
func (c *Context) Summary(budget int) string {
	if budget <= 0 {
		budget = DefaultSummaryBudget
	}
	c.mu.Lock()
	defer c.mu.Unlock()

	vars := c.varsBlock(budget/4, nil)
	files := c.sessionFilesBlock(budget/8, "")
	if files == "" {
		files = c.filesBlock(budget/8, "")
	}
	header := fmt.Sprintf("Steps run: %d\n", len(c.history))
	steps, _ := c.stepEntries(budget-len(vars)-len(files), len(header), false)
	out := c.scrub(header + steps + vars + files)
	if len(out) > budget {
		out = clipHead(out, budget)
	}
	return out
}

// SummaryParts is the Summary in parts, for a prompt that a provider
// caches by prefix: the steps only grow at their end from one request to
// the next (until older ones are shortened to a line), the variables and
// files change anywhere, so the step generator sends the steps first.
type SummaryParts struct {
	// Steps are the step entries, oldest first, without Summary's
	// "Steps run" header and without what says nothing in their status
	// (an ok step's exit 0, a duration under a second); "" before the
	// first step.
	Steps string
	// Vars is the variables block without the variables a step entry of
	// Steps shows: one holding exactly the output that entry shows in
	// full (the step saved it, "saved as"). "" when no other variable is
	// set.
	Vars string
	// Files is the files block without the files a step entry of Steps
	// names in its parameters; "" when no other file was accessed.
	Files string
}

// Parts is Summary(budget) split into SummaryParts, with the variables
// that repeat a step's output shown once; together at most budget bytes.
func (c *Context) Parts(budget int) SummaryParts {
	if budget <= 0 {
		budget = DefaultSummaryBudget
	}
	c.mu.Lock()
	defer c.mu.Unlock()

	vars := c.varsBlock(budget/4, nil) // the room they may take, before de-duplication
	files := c.sessionFilesBlock(budget/8, "")
	if files == "" {
		files = c.filesBlock(budget/8, "")
	}
	steps, shown := c.stepEntries(budget-len(vars)-len(files), 0, true)
	named := paramLines(steps)
	files = c.sessionFilesBlock(budget/8, named)
	if files == "" {
		files = c.filesBlock(budget/8, named)
	}
	vars = c.varsBlock(budget/4, shown)
	if vars == varsHead || vars == varsHead+varsNone {
		vars = ""
	}
	p := SummaryParts{Steps: c.scrub(steps), Vars: c.scrub(vars), Files: c.scrub(files)}
	if over := len(p.Steps) + len(p.Vars) + len(p.Files) - budget; over > 0 {
		p.Steps = clipHead(p.Steps, max(len(p.Steps)-over, 0))
	}
	return p
}

// stepEntries renders the history in at most budget-header bytes (header:
// the size of what the caller puts before them): the newest
// RecentSteps in full, older ones a line each, newest kept. shown maps a
// variable to the step (1-based) whose entry shows its whole value as
// the output: the latest step that saved it, shown in full and unclipped,
// when the variable still holds exactly that output.
func (c *Context) stepEntries(budget, header int, compact bool) (text string, shown map[string]int) {
	n := len(c.history)
	if n == 0 {
		return "", nil
	}
	outMax := min(max(budget/(2*RecentSteps), 100), 2000)
	const reserve = 48 // for the "earlier steps not shown" line
	remaining := budget - header - reserve
	var entries []string // newest first
	full := true         // once a full entry does not fit, older ones get one line
	saved := map[string]bool{}
	i := n - 1
	for ; i >= 0; i-- {
		r := c.history[i]
		e := oneLine(i+1, r, c.redactor(), compact)
		isFull := false
		if full && i >= n-RecentSteps {
			if f := fullEntry(i+1, r, outMax, c.redactor(), compact); len(f) <= remaining {
				e, isFull = f, true
			} else {
				full = false
			}
		}
		if len(e) > remaining {
			if i == n-1 && remaining > 1 {
				entries = append(entries, clipHead(e, remaining-1)+"\n")
				i--
			}
			break
		}
		if r.SaveAs != "" && !saved[r.SaveAs] {
			saved[r.SaveAs] = true
			if v, ok := c.vars[r.SaveAs].(string); ok && isFull && v == r.Output && len(strings.TrimRight(c.redactor()(r.Output), "\n")) <= outMax &&
				(!compact || exitLineShown(r)) {
				if shown == nil {
					shown = map[string]int{}
				}
				shown[r.SaveAs] = i + 1
			}
		}
		remaining -= len(e)
		entries = append(entries, e)
	}
	var b strings.Builder
	if i >= 0 {
		if omitted := fmt.Sprintf("  … %d earlier steps not shown\n", i+1); len(omitted) <= remaining+reserve {
			b.WriteString(omitted)
		}
	}
	for j := len(entries) - 1; j >= 0; j-- {
		b.WriteString(entries[j])
	}
	return b.String(), shown
}

// statusText is a step entry's status: "ok, exit 0, 12ms". compact
// (Parts) leaves out what says nothing: an ok step's exit 0, and a
// duration under a second.
func statusText(r StepRecord, withDuration, compact bool) string {
	s := string(r.Status)
	if r.Status == StatusError || r.Status == StatusOK && (r.ExitCode != 0 || !compact) {
		s += fmt.Sprintf(", exit %d", r.ExitCode)
	}
	if withDuration && (!compact || r.Duration >= time.Second) {
		s += fmt.Sprintf(", %dms", r.Duration.Milliseconds())
	}
	return s
}

func fullEntry(num int, r StepRecord, outMax int, red func(string) string, compact bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. %s [%s]", num, oneLineText(r.Tool), statusText(r, true, compact))
	if r.Description != "" {
		b.WriteString(": " + oneLineText(r.Description))
	}
	b.WriteString("\n")
	if len(r.Params) > 0 {
		b.WriteString(paramsPrefix + clipHead(red(jsonText(r.Params)), paramsMax) + "\n")
	}
	if r.SaveAs != "" {
		b.WriteString("   saved as: " + r.SaveAs + "\n")
	}
	out := strings.TrimRight(red(r.Output), "\n")
	if compact && !exitLineShown(r) {
		out = withoutExitLine(out, r.ExitCode)
	}
	out = clipMiddle(out, outMax)
	if out == "" {
		b.WriteString("   output: (none)\n")
	} else {
		b.WriteString("   output: " + strings.ReplaceAll(out, "\n", "\n     ") + "\n")
	}
	return b.String()
}

// exitLineShown reports whether a compact entry shows r's output as it is:
// when its status does not show the exit code, or the output does not end
// with the "[exit code N]" line (withoutExitLine).
func exitLineShown(r StepRecord) bool {
	if r.Status != StatusError && r.Status != StatusOK {
		return true
	}
	out := strings.TrimRight(r.Output, "\n")
	return withoutExitLine(out, r.ExitCode) == out
}

// withoutExitLine is out without the "[exit code N]" line a command's
// observation ends with (tools.Observe) when N is the step's exit code:
// a compact entry's status shows it ("[error, exit 1]").
func withoutExitLine(out string, code int) string {
	if code == 0 {
		return out
	}
	line := fmt.Sprintf("[exit code %d]", code)
	if out == line {
		return ""
	}
	if rest, ok := strings.CutSuffix(out, "\n"+line); ok {
		return rest
	}
	return out
}

func oneLine(num int, r StepRecord, red func(string) string, compact bool) string {
	line := fmt.Sprintf("%d. %s [%s]", num, oneLineText(r.Tool), statusText(r, false, compact))
	if r.Description != "" {
		line += ": " + oneLineText(r.Description)
	}
	if out := strings.TrimSpace(red(r.Output[:min(len(r.Output), oneLineRedact)])); out != "" {
		first, _, _ := strings.Cut(out, "\n")
		line += " → " + oneLineText(first)
	}
	return clipHead(line, oneLineMax) + "\n"
}

// Exposure is how a variable shows in the Summary the model reads.
type Exposure uint8

const (
	// ExposeValue shows `name = value` (the default).
	ExposeValue Exposure = iota
	// ExposeName shows `name = [REDACTED]`: the model knows the variable
	// and can use it in templates without seeing its value.
	ExposeName
	// ExposeNone leaves the variable out of the summary.
	ExposeNone
)

// Redacted stands for a value the model is not shown.
const Redacted = "[REDACTED]"

// minScrub is the shortest value of a variable not shown that Summary
// also replaces inside step records (shorter ones would hit ordinary
// text).
const minScrub = 4

// SetExposure says how variable name shows in Summary; the variable keeps
// its value for templating and conditions. Wherever the string value of a
// variable not shown (ExposeName, ExposeNone; minScrub bytes or more)
// appears in the summary — a resolved parameter, a step's output — it is
// replaced by Redacted. The marking holds for the name whatever value it
// gets later.
func (c *Context) SetExposure(name string, e Exposure) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exposed == nil {
		c.exposed = map[string]Exposure{}
	}
	c.exposed[name] = e
}

// hidden is a value of a variable not shown, and its name.
type hidden struct{ value, name string }

// hiddenValues are the string values of the variables not shown, longest
// first, each also as it appears inside JSON text.
func (c *Context) hiddenValues() []hidden {
	var vals []hidden
	for name, e := range c.exposed {
		s, ok := c.vars[name].(string)
		if e == ExposeValue || !ok || len(s) < minScrub {
			continue
		}
		vals = append(vals, hidden{s, name})
		if j := jsonText(s); len(j) > 2 && j[1:len(j)-1] != s {
			vals = append(vals, hidden{j[1 : len(j)-1], name})
		}
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i].value) > len(vals[j].value) })
	return vals
}

// Scrub replaces, in s, the values of the variables the model is not
// shown (SetExposure) by Redacted.
func (c *Context) Scrub(s string) string {
	out, _ := c.ScrubMarked(s, func(string) string { return Redacted })
	return out
}

// ScrubMarked replaces, in s, the value of each variable the model is not
// shown (SetExposure) by mark(its name), and lists the names replaced:
// what a step's raw output says goes through it before it reaches the
// model.
func (c *Context) ScrubMarked(s string, mark func(name string) string) (string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scrubMarked(s, mark)
}

// scrub replaces the values of variables not shown in s.
func (c *Context) scrub(s string) string {
	out, _ := c.scrubMarked(s, func(string) string { return Redacted })
	return out
}

func (c *Context) scrubMarked(s string, mark func(string) string) (string, []string) {
	var names []string
	for _, h := range c.hiddenValues() {
		if !strings.Contains(s, h.value) {
			continue
		}
		s = strings.ReplaceAll(s, h.value, mark(h.name))
		if !slices.Contains(names, h.name) {
			names = append(names, h.name)
		}
	}
	return s, names
}

// varsBlock lists the variables in at most budget bytes; one in shown
// names the step whose output it is instead of repeating it.
// The variables block's header, and its line when there is none.
const (
	varsHead = "Variables:\n"
	varsNone = "  (none)\n"
)

// varsBlock is the variables block in at most budget bytes, without those
// of shown (Parts).
func (c *Context) varsBlock(budget int, shown map[string]int) string {
	names := make([]string, 0, len(c.vars))
	for _, k := range sortedKeys(c.vars) {
		if k != LastVar && c.exposed[k] != ExposeNone {
			names = append(names, k)
		}
	}
	var b strings.Builder
	b.WriteString(varsHead)
	if len(names) == 0 {
		b.WriteString(varsNone)
	}
	const reserve = 24 // for "  … N more"
	for i, k := range names {
		val := jsonText(c.vars[k])
		if c.exposed[k] == ExposeName {
			val = Redacted
		}
		if _, ok := shown[k]; ok && c.exposed[k] == ExposeValue {
			continue // its step's entry shows it: "saved as"
		}
		line := clipHead("  "+k+" = "+c.redactor()(val), varLineMax) + "\n"
		if b.Len()+len(line)+reserve > budget {
			fmt.Fprintf(&b, "  … %d more\n", len(names)-i)
			break
		}
		b.WriteString(line)
	}
	if b.Len() > budget {
		return ""
	}
	return b.String()
}

// filesBlock is the block of the files accessed, newest kept, in at most
// budget bytes, without those named in the parameters lines named
// (paramLines); "" when none is left.
func (c *Context) filesBlock(budget int, named string) string {
	var lines []string // newest first
	size := len("Files accessed:\n") + 40
	i := len(c.files) - 1
	for ; i >= 0; i-- {
		f := c.files[i]
		if namedIn(named, f.Path) {
			continue
		}
		line := clipHead("  "+string(f.Op)+" "+oneLineText(f.Path), varLineMax) + "\n"
		if size+len(line) > budget {
			break
		}
		size += len(line)
		lines = append(lines, line)
	}
	if size > budget || len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Files accessed:\n")
	if i >= 0 {
		fmt.Fprintf(&b, "  … %d earlier\n", i+1)
	}
	for j := len(lines) - 1; j >= 0; j-- {
		b.WriteString(lines[j])
	}
	return b.String()
}

// jsonText renders v as compact JSON with sorted keys and without HTML
// escaping.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return pyRepr(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// oneLineText replaces line breaks so s fits on one line.
func oneLineText(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ").Replace(s)
}

// clipHead shortens s to at most n bytes at a rune boundary, ending in "…".
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	if n < len(ell) {
		return ""
	}
	cut := n - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}

// clipMiddle shortens s to at most n bytes, keeping its head and tail.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// The marker is sized for the largest count, then filled in.
	const format = "\n… [%d bytes omitted] …\n"
	keep := n - len(fmt.Sprintf(format, len(s)))
	if keep < 2 {
		return clipHead(s, n)
	}
	head, tail := keep/2, keep-keep/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	// The marker has its own line breaks.
	if start < len(s) && s[start] == '\n' {
		start++
	}
	if head > 0 && s[head-1] == '\n' {
		head--
	}
	return s[:head] + fmt.Sprintf(format, start-head) + s[start:]
}

// oneLineRedact is how much of an older step's output is redacted for
// its one line: the first line, and then some.
const oneLineRedact = 4 << 10

// SetRedactor makes Summary pass every step's output, parameters and
// variable value through f before clipping them (a secret cut in two by
// the clip would no longer be recognized afterwards); nil: none.
func (c *Context) SetRedactor(f func(string) string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redact = f
}

// redactor is the redactor SetRedactor set, or the identity. c.mu is held.
func (c *Context) redactor() func(string) string {
	if c.redact == nil {
		return func(s string) string { return s }
	}
	return c.redact
}

// paramsPrefix begins the parameters line of a full step entry.
const paramsPrefix = "   parameters: "

// paramLines are the parameters lines of the step entries text, one a
// line.
func paramLines(steps string) string {
	var b strings.Builder
	for line := range strings.Lines(steps) {
		if strings.HasPrefix(line, paramsPrefix) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// namedIn reports whether the parameters lines named hold path, as a
// JSON string's content.
func namedIn(named, path string) bool {
	if named == "" || path == "" {
		return false
	}
	j := jsonText(path)
	return strings.Contains(named, `"`+j[1:len(j)-1]+`"`)
}
