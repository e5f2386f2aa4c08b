package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/schollz/progressbar/v3"
)

// batchOutput shows a batch run. On a terminal: one progress bar over the
// hosts on stderr, a line per finished host on stdout, and the summary
// table at the end. With --json: every event of every host, each with its
// "host", and a final "batch" event, on stdout and nothing else there.
// With --out DIR: DIR/HOST.log holds each host's run as the terminal view
// shows one host (and DIR/HOST.transcript.jsonl the model's messages).
type batchOutput struct {
	a     *app
	dir   string // --out
	total int

	// ask is held while a question is on the terminal (pause): one at a
	// time.
	ask sync.Mutex

	// shell counts the medium/high risk shell commands that ran, on every
	// host: undo cannot put back what they changed.
	shell atomic.Int64
	// shellCmds names the first maxNamed of them: "HOST step N: COMMAND".
	shellMu   sync.Mutex
	shellCmds []string
	// prompt and completion count the model's tokens over every host;
	// cost prices them (", cost 0.0123"; nil: no price).
	prompt, completion atomic.Int64
	cost               func(prompt, completion int) string

	logMu sync.Mutex
	logs  map[string]*hostLog // --out: open logs; nil once a host is done

	mu   sync.Mutex // the streams, the bar and the counters
	enc  *json.Encoder
	bar  *progressbar.ProgressBar
	done int
	errw bool // a JSON write failed (reported once)
	// paused: a question is on the terminal; output waits in held until
	// it is answered. Nothing that writes waits for the person: a host's
	// connection warns from inside its SSH handshake.
	paused bool
	held   []func()
}

// write runs fn, which writes to the streams, now, or once the question on
// the terminal is answered. o.mu must be held.
func (o *batchOutput) write(fn func()) {
	if o.paused {
		o.held = append(o.held, fn)
		return
	}
	fn()
}

func newBatchOutput(a *app, dir string, asJSON bool, total int) (*batchOutput, error) {
	o := &batchOutput{a: a, dir: dir, total: total}
	if asJSON {
		o.enc = json.NewEncoder(a.stdout)
		o.enc.SetEscapeHTML(false)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, usagef("--out: %w", err)
		}
	}
	return o, nil
}

// start shows the progress bar when stderr is a terminal.
func (o *batchOutput) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.a.stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return
	}
	o.bar = progressbar.NewOptions(o.total,
		progressbar.OptionSetWriter(o.a.stderr),
		progressbar.OptionSetDescription("hosts"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	o.bar.RenderBlank()
}

// Close removes the progress bar.
func (o *batchOutput) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bar != nil {
		o.bar.Clear()
		o.bar = nil
	}
}

// pause runs fn (a question on the terminal) with the bar cleared and
// nothing else printed meanwhile.
// The other hosts go on meanwhile; what they print is held back and
// printed after fn.
func (o *batchOutput) pause(fn func()) {
	o.ask.Lock()
	defer o.ask.Unlock()
	o.mu.Lock()
	if o.bar != nil {
		o.bar.Clear()
	}
	o.paused = true
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.paused = false
		for _, w := range o.held {
			w()
		}
		o.held = nil
		if o.bar != nil {
			o.bar.RenderBlank()
		}
	}()
	fn()
}

// warn prints a message for the person on stderr (once any question on
// the terminal is answered).
func (o *batchOutput) warn(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write(func() {
		if o.bar != nil {
			o.bar.Clear()
			defer o.bar.RenderBlank()
		}
		fmt.Fprintln(o.a.stderr, "agent:", msg)
	})
}

// event takes the engine's events of every host: each goes to the
// host's log (--out) and to --json; a host's end prints its line.
func (o *batchOutput) event(ev event.Event) {
	switch ev.Kind {
	case event.KindWarning:
		o.hostWarning(ev.Host, ev.Warning)
		return
	case event.KindHost:
		o.hostDone(ev.Host, ev.HostEnd)
		if o.enc != nil { // the host's result, for agent report
			o.mu.Lock()
			defer o.mu.Unlock()
			o.write(func() { o.encode(ev) })
		}
		return
	case event.KindStep:
		if shellChange(ev.Step) {
			o.shell.Add(1)
			o.shellMu.Lock()
			if len(o.shellCmds) < maxNamed {
				o.shellCmds = append(o.shellCmds, fmt.Sprintf("%s step %d: %s", printable(ev.Host), ev.Step.Step, printable(oneLineCmd(ev.Step.Command, 120))))
			}
			o.shellMu.Unlock()
		}
	case event.KindLLM:
		o.prompt.Add(int64(ev.LLM.PromptTokens))
		o.completion.Add(int64(ev.LLM.CompletionTokens))
	}
	if ev.Kind != event.KindBatch {
		if l := o.hostLog(ev.Host); l != nil {
			l.render.event(ev)
			if ev.Kind == event.KindDone && ev.Done.Text != "" {
				l.render.finishText(ev.Host, ev.Session, ev.Done.Status == "success", ev.Done.Text)
			}
		}
	}
	if o.enc == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write(func() { o.encode(ev) })
}

func (o *batchOutput) encode(v any) {
	if err := o.enc.Encode(v); err != nil && !o.errw {
		o.errw = true
		fmt.Fprintf(o.a.stderr, "agent: write event: %v\n", err)
	}
}

// hostDone records a finished (or not started) host: the line on the
// terminal, the bar; its log is closed.
func (o *batchOutput) hostDone(host string, res *event.HostEnd) {
	o.closeLog(host)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write(func() {
		o.done++
		if o.enc == nil {
			if o.bar != nil {
				o.bar.Clear()
			}
			if _, more := errFirstLine(res.Err); more {
				// The explanation (OpenSSH's changed host key warning…)
				// once on stderr; the line and the table get its first line.
				fmt.Fprintf(o.a.stderr, "agent: %s: %s\n", printable(host), strings.TrimSpace(res.Err))
			}
			fmt.Fprintf(o.a.stdout, "[%*d/%d] %s\n", len(fmt.Sprint(o.total)), o.done, o.total, hostLine(host, res))
		}
		if o.bar != nil {
			o.bar.Add(1)
		}
	})
}

// hostLine is the line shown when a host finishes.
func hostLine(host string, r *event.HostEnd) string {
	status := statusWord[r.Status]
	s := fmt.Sprintf("%-7s %s", status, printable(host))
	switch {
	case r.Status == event.HostNotRun:
	case r.How == "": // not connected
		s += "  " + fmtDuration(time.Duration(r.DurationMS)*time.Millisecond)
	default:
		s += fmt.Sprintf("  %d %s, %d changed, %s", r.Steps, pluralize(r.Steps, "step"), r.Changed, r.How)
		if r.LLMCalls > 0 {
			s += fmt.Sprintf(", %d LLM %s", r.LLMCalls, pluralize(r.LLMCalls, "call"))
		}
		s += ", " + fmtDuration(time.Duration(r.DurationMS)*time.Millisecond)
	}
	if r.Err != "" {
		first, _ := errFirstLine(r.Err)
		s += " — " + printable(oneLineText(first, 160))
	}
	return s
}

// statusWord is how the terminal says a host's status.
var statusWord = map[string]string{event.HostOK: "ok", event.HostFailed: "FAILED", event.HostNotRun: "not run"}

// errFirstLine is the first non-empty line of a host's error: a one-line
// reason where the error explains itself over several lines
// (sshtr.HostKeyError: "host key verification failed: host key for
// [web]:2222 changed (known_hosts:5)", then OpenSSH's @@@ warning). more
// reports whether lines follow.
func errFirstLine(s string) (first string, more bool) {
	s = strings.TrimSpace(s)
	first, rest, _ := strings.Cut(s, "\n")
	first = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(first), ":"))
	return first, strings.TrimSpace(rest) != ""
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}

// summary ends the run: the table on the terminal, the batch event with
// --json.
func (o *batchOutput) summary(r engine.BatchResult, undo string) {
	results, llmCalls, session, ev := r.Hosts, r.LLMCalls, r.Session, r.Batch
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, w := range o.held { // no question is pending once every host is done
		w()
	}
	o.held, o.paused = nil, false
	if o.bar != nil {
		o.bar.Clear()
		o.bar = nil
	}
	changed := 0
	for _, r := range results {
		changed += r.Changed
	}
	if o.enc != nil {
		return // the engine's batch event ended the stream
	}
	w := o.a.stdout
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSTATUS\tRUN\tSTEPS\tCHANGED\tDURATION\tERROR")
	for _, r := range results {
		status := statusWord[r.Status]
		how, steps, changed, dur := r.How, fmt.Sprint(r.Steps), fmt.Sprint(r.Changed), fmtDuration(time.Duration(r.DurationMS)*time.Millisecond)
		if r.Status == event.HostNotRun {
			how, steps, changed, dur = "-", "-", "-", "-"
		}
		if how == "" {
			how = "-"
		}
		first, _ := errFirstLine(r.Err)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(r.Host), status, how, steps, changed, dur,
			printable(oneLineText(first, 100)))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d %s: %d ok, %d failed, %d not run in %s", ev.Hosts, pluralize(ev.Hosts, "host"),
		ev.OK, ev.Failed, ev.NotRun, fmtDuration(time.Duration(ev.DurationMS)*time.Millisecond))
	if llmCalls > 0 {
		p, c := int(o.prompt.Load()), int(o.completion.Load())
		fmt.Fprintf(w, "; LLM: %d %s, %d prompt + %d completion tokens", llmCalls, pluralize(llmCalls, "call"), p, c)
		if o.cost != nil {
			fmt.Fprint(w, o.cost(p, c))
		}
	}
	fmt.Fprintln(w)
	if changed > 0 {
		fmt.Fprintf(w, "session %s — %d %s changed; to put them back: %s (one host: add --limit HOST)\n",
			session, changed, pluralize(changed, "file"), printable(undo))
	}
	if n := int(o.shell.Load()); n > 0 {
		fmt.Fprintf(w, "%s (%d %s):\n", notJournaled, n, pluralize(n, "command"))
		o.shellMu.Lock()
		for _, c := range o.shellCmds {
			fmt.Fprintf(w, "  %s\n", c)
		}
		if more := n - len(o.shellCmds); more > 0 {
			fmt.Fprintf(w, "  … and %d more (--json or --out names each)\n", more)
		}
		o.shellMu.Unlock()
	}
	if o.dir != "" {
		fmt.Fprintf(w, "logs in %s\n", o.dir)
	}
}

// hostLog is one host's log under --out: the terminal view of its run.
type hostLog struct {
	file   *os.File
	render *termRenderer
}

// hostLog returns host's log, opened on its first event; nil without
// --out (or when it cannot be opened: warned once).
func (o *batchOutput) hostLog(host string) *hostLog {
	if o.dir == "" || host == "" {
		return nil
	}
	o.logMu.Lock()
	defer o.logMu.Unlock()
	if l, ok := o.logs[host]; ok {
		return l
	}
	if o.logs == nil {
		o.logs = map[string]*hostLog{}
	}
	f, err := os.OpenFile(filepath.Join(o.dir, safeFileName(host)+".log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		o.logs[host] = nil
		o.warn(fmt.Sprintf("%s: no log: %v", host, err))
		return nil
	}
	l := &hostLog{file: f, render: &termRenderer{w: f, full: true}}
	o.logs[host] = l
	return l
}

// closeLog closes host's log once the host is done.
func (o *batchOutput) closeLog(host string) {
	o.logMu.Lock()
	defer o.logMu.Unlock()
	if l := o.logs[host]; l != nil {
		l.file.Close()
		o.logs[host] = nil
	}
}

// hostWarning writes a message about host to its log, or, without --out,
// to stderr (a log-only note is dropped then).
func (o *batchOutput) hostWarning(host string, w *event.Warning) {
	if l := o.hostLog(host); l != nil {
		if w.LogOnly {
			fmt.Fprintf(l.file, "%s\n", w.Text)
		} else {
			fmt.Fprintf(l.file, "agent: %s\n", w.Text)
		}
		return
	}
	switch {
	case w.LogOnly:
	case host == "": // about the batch
		o.warn(w.Text)
	default:
		o.warn(host + ": " + w.Text)
	}
}

// hostWarn is hostWarning for a message of the front end's own.
func (o *batchOutput) hostWarn(host, msg string) {
	o.hostWarning(host, &event.Warning{Text: msg})
}

// safeFileName turns an inventory host name into a file name: characters
// other than letters, digits and ._-@: become _, and it never starts
// with a dot.
func safeFileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-@:", c) >= 0
		if !ok {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s[0] == '.' {
		s = "_" + s
	}
	return s
}

// maxNamed bounds the unjournaled commands the batch summary names.
const maxNamed = 20
