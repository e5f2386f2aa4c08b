package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/stepgen"
)

// batchOutput shows a batch run. On a terminal: one progress bar over the
// hosts on stderr, a line per finished host on stdout, and the summary
// table at the end. With --json: every event of every host, each with its
// "host", and a final "batch" event, on stdout and nothing else there.
// With --out DIR: DIR/HOST.log holds each host's run as the terminal view
// shows one host (and DIR/HOST.transcript.jsonl the model's messages).
type batchOutput struct {
	a      *app
	dir    string // --out
	total  int
	start0 time.Time

	// ask is held while a question is on the terminal (pause): one at a
	// time.
	ask sync.Mutex

	// shell counts the medium/high risk shell commands that ran, on every
	// host: undo cannot put back what they changed.
	shell atomic.Int64

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
	o := &batchOutput{a: a, dir: dir, total: total, start0: time.Now()}
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
	o.start0 = time.Now()
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

// hostEvent is an event with its host: the llm event has none of its own.
type hostLLMEvent struct {
	*stepgen.LLMEvent
	Host string `json:"host"`
}

// replayEvent tells how a --plan-once replay went on a host: "followed"
// (every step ended as on the first host) or "diverged" (the host then
// falls back to the model).
type replayEvent struct {
	Event  string `json:"event"` // "replay"
	Host   string `json:"host"`
	From   string `json:"from"` // the host the plan came from
	Status string `json:"status"`
	Steps  int    `json:"steps"`
	Reason string `json:"reason,omitempty"`
}

func (*replayEvent) Name() string { return "replay" }

// batchEvent is the last event of a batch run with --json.
type batchEvent struct {
	Event      string `json:"event"` // "batch"
	Session    string `json:"session"`
	Hosts      int    `json:"hosts"`
	OK         int    `json:"ok"`
	Failed     int    `json:"failed"`
	NotRun     int    `json:"not_run"`
	LLMCalls   int    `json:"llm_calls"`
	DurationMS int64  `json:"duration_ms"`
}

// json prints ev for host with --json.
func (o *batchOutput) json(host string, ev planner.Event) {
	if o.enc == nil {
		return
	}
	var v any = ev
	if l, ok := ev.(*stepgen.LLMEvent); ok {
		v = hostLLMEvent{LLMEvent: l, Host: host}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write(func() { o.encode(v) })
}

func (o *batchOutput) encode(v any) {
	if err := o.enc.Encode(v); err != nil && !o.errw {
		o.errw = true
		fmt.Fprintf(o.a.stderr, "agent: write event: %v\n", err)
	}
}

// hostDone records a finished (or not started) host: its done event when
// the work emitted none, the line on the terminal, the bar.
func (o *batchOutput) hostDone(res hostResult, done *planner.DoneEvent) {
	if done != nil {
		o.json(res.Host, done)
	}
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
				fmt.Fprintf(o.a.stderr, "agent: %s: %s\n", printable(res.Host), strings.TrimSpace(res.Err))
			}
			fmt.Fprintf(o.a.stdout, "[%*d/%d] %s\n", len(fmt.Sprint(o.total)), o.done, o.total, hostLine(res))
		}
		if o.bar != nil {
			o.bar.Add(1)
		}
	})
}

// hostLine is the line shown when a host finishes.
func hostLine(r hostResult) string {
	status := map[string]string{hostOK: "ok", hostFailed: "FAILED", hostNotRun: "not run"}[r.Status]
	s := fmt.Sprintf("%-7s %s", status, printable(r.Host))
	switch {
	case r.Status == hostNotRun:
	case r.How == "": // not connected
		s += "  " + fmtDuration(r.Duration)
	default:
		s += fmt.Sprintf("  %d %s, %d changed, %s", r.Steps, pluralize(r.Steps, "step"), r.Changed, r.How)
		if r.LLMCalls > 0 {
			s += fmt.Sprintf(", %d LLM %s", r.LLMCalls, pluralize(r.LLMCalls, "call"))
		}
		s += ", " + fmtDuration(r.Duration)
	}
	if r.Err != "" {
		first, _ := errFirstLine(r.Err)
		s += " — " + printable(oneLineText(first, 160))
	}
	return s
}

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
func (o *batchOutput) summary(results []hostResult, llmCalls int, session, undo string) {
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
	ev := batchEvent{Event: "batch", Session: session, Hosts: len(results), LLMCalls: llmCalls,
		DurationMS: time.Since(o.start0).Milliseconds()}
	changed := 0
	for _, r := range results {
		switch r.Status {
		case hostOK:
			ev.OK++
		case hostNotRun:
			ev.NotRun++
		default:
			ev.Failed++
		}
		changed += r.Changed
	}
	if o.enc != nil {
		o.encode(ev)
		return
	}
	w := o.a.stdout
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSTATUS\tRUN\tSTEPS\tCHANGED\tDURATION\tERROR")
	for _, r := range results {
		status := map[string]string{hostOK: "ok", hostFailed: "FAILED", hostNotRun: "not run"}[r.Status]
		how, steps, changed, dur := r.How, fmt.Sprint(r.Steps), fmt.Sprint(r.Changed), fmtDuration(r.Duration)
		if r.Status == hostNotRun {
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
		fmt.Fprintf(w, "; LLM: %d %s", llmCalls, pluralize(llmCalls, "call"))
	}
	fmt.Fprintln(w)
	if changed > 0 {
		fmt.Fprintf(w, "session %s — %d %s changed; to put them back: %s (one host: add --limit HOST)\n",
			session, changed, pluralize(changed, "file"), printable(undo))
	}
	if n := int(o.shell.Load()); n > 0 {
		fmt.Fprintf(w, "%s (%d %s)\n", notJournaled, n, pluralize(n, "command"))
	}
	if o.dir != "" {
		fmt.Fprintf(w, "logs in %s\n", o.dir)
	}
}

// hostSink is the renderer of one host: it counts what the summary needs,
// writes the host's log under --out and passes events on for --json. What
// it writes goes through its redactor: the log line by line, events field
// by field.
type hostSink struct {
	o      *batchOutput
	host   string
	redact redactor
	log    renderer  // the terminal view, into the host's log file
	file   io.Closer // the log (a redactingWriter on the file), nil without --out

	mu    sync.Mutex
	paths map[string]bool // files changed
	done  bool
}

// newHostSink returns host's sink; secrets are the values of its
// secret-named variables, never written out.
func (o *batchOutput) newHostSink(host string, secrets []string) *hostSink {
	s := &hostSink{o: o, host: host, redact: redactor{secrets: secrets}, log: nopRenderer{}, paths: map[string]bool{}}
	if o.dir == "" {
		return s
	}
	f, err := os.OpenFile(filepath.Join(o.dir, safeFileName(host)+".log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		o.warn(fmt.Sprintf("%s: no log: %v", host, err))
		return s
	}
	w := &redactingWriter{w: f, redact: s.redact.String}
	s.file, s.log = w, &termRenderer{w: w}
	return s
}

func (s *hostSink) event(ev planner.Event) {
	s.mu.Lock()
	switch ev := ev.(type) {
	case *planner.StepEvent:
		if ev.Status == "ok" && ev.Diff != "" && !ev.DryRun {
			s.paths[ev.Path] = true
		}
		if shellChange(ev) {
			s.o.shell.Add(1)
		}
	case *planner.DoneEvent:
		s.done = true
	}
	s.log.event(ev)
	s.mu.Unlock()
	if s.o.enc != nil {
		s.o.json(s.host, s.redact.event(ev))
	}
}

func (s *hostSink) finish(sum planner.Summary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.finish(sum)
}

// warn notes msg in the host's log, or on stderr without --out.
func (s *hostSink) warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		fmt.Fprintf(s.file.(io.Writer), "agent: %s\n", msg)
		return
	}
	s.o.warn(s.host + ": " + s.redact.String(msg))
}

func (s *hostSink) changed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.paths)
}

func (s *hostSink) sawDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Close closes the host's log; a note ends it when the host failed before
// any step.
func (s *hostSink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		s.file.Close()
		s.file = nil
		s.log = nopRenderer{}
	}
}

// logNote writes a line to the host's log only.
func (s *hostSink) logNote(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		fmt.Fprintf(s.file.(io.Writer), "%s\n", msg)
	}
}

// redactor removes secrets from what a batch writes: safety.RedactString's
// patterns, and the literal values of the host's secret-named variables.
type redactor struct {
	secrets []string // longest first
}

// String returns s with its secrets replaced.
func (r redactor) String(s string) string {
	s = safety.RedactString(s)
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, safety.Redacted)
	}
	return s
}

// event returns a copy of ev with every string in it (fields, parameters,
// lists; the event's name aside) through String; parameters whose names
// say secret are replaced whole (safety.Redact).
func (r redactor) event(ev planner.Event) planner.Event {
	v := reflect.ValueOf(ev)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return ev
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	r.fields(cp.Elem())
	out, ok := cp.Interface().(planner.Event)
	if !ok {
		return ev
	}
	return out
}

func (r redactor) fields(v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, sf := v.Field(i), t.Field(i)
		if !sf.IsExported() || sf.Name == "Event" {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(r.String(f.String()))
		case reflect.Struct:
			r.fields(f)
		case reflect.Slice:
			if ss, ok := f.Interface().([]string); ok && ss != nil {
				out := make([]string, len(ss))
				for j, x := range ss {
					out[j] = r.String(x)
				}
				f.Set(reflect.ValueOf(out))
			}
		case reflect.Map:
			if m, ok := f.Interface().(map[string]any); ok && m != nil {
				f.Set(reflect.ValueOf(r.value(safety.Redact(m))))
			}
		}
	}
}

// value passes the strings of a parameter value through String.
func (r redactor) value(v any) any {
	switch v := v.(type) {
	case string:
		return r.String(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = r.value(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = r.value(x)
		}
		return out
	}
	return v
}

// redactingWriter writes whole lines through redact, so a secret is seen
// whole however the writes split it; Close writes the rest and closes the
// file.
type redactingWriter struct {
	w      io.WriteCloser
	redact func(string) string
	buf    []byte
}

func (w *redactingWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexByte(w.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	_, err := io.WriteString(w.w, w.redact(string(w.buf[:i+1])))
	w.buf = append(w.buf[:0], w.buf[i+1:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *redactingWriter) Close() error {
	var err error
	if len(w.buf) > 0 {
		_, err = io.WriteString(w.w, w.redact(string(w.buf)))
		w.buf = nil
	}
	if cerr := w.w.Close(); err == nil {
		err = cerr
	}
	return err
}

type nopRenderer struct{}

func (nopRenderer) event(planner.Event)    {}
func (nopRenderer) finish(planner.Summary) {}

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
