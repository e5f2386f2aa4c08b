package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/peterh/liner"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/stepgen"
)

// replPrompt is the first product spec's prompt.
const replPrompt = "Agent > "

// replCommand reads one REPL line: what to do with it.
type replAction int

const (
	replSkip  replAction = iota // empty line
	replExit                    // exit, quit
	replTask                    // anything else: a task for the model
	replShell                   // !command: the command, run without the model
)

// parseREPLLine classifies a line typed at the prompt and returns the task
// text, trimmed, or for a line starting with '!' the command after it.
//
// Only '!' passes a line to the shell: a plain line is always a task for
// the model, even one that is exactly a command. Words such as "reboot",
// "top", "free", "uptime" or "history" are both commands and requests,
// and a guess that took "reboot" for a command would run it; typing '!' is
// the operator's unambiguous "run this" (docs/decisions.md).
func parseREPLLine(line string) (replAction, string) {
	task := strings.TrimSpace(line)
	switch strings.ToLower(task) {
	case "":
		return replSkip, ""
	case "exit", "quit", "exit()", "quit()", ":q":
		return replExit, ""
	}
	if cmd, ok := strings.CutPrefix(task, "!"); ok {
		return replShell, strings.TrimSpace(cmd)
	}
	return replTask, task
}

// lineReader is where the REPL's lines come from: liner on a terminal,
// plain lines from stdin otherwise.
type lineReader interface {
	// readLine returns the next line; io.EOF at the end (Ctrl-D),
	// liner.ErrPromptAborted for Ctrl-C at the prompt, ctx's error when
	// ctx ends first.
	readLine(ctx context.Context) (string, error)
	addHistory(line string)
	close()
}

type lineResult struct {
	line string
	err  error
}

// stdinLines reads tasks line by line from a pipe or file, with no prompt
// (nothing but the tasks' own output reaches stdout) — or, when stdin is a
// terminal but stdout is not (agent | tee log), with the prompt on prompt
// (stderr) and the approvals read from the same lines.
type stdinLines struct {
	r      io.Reader
	prompt io.Writer // nil: no prompt
	once   sync.Once
	lines  chan lineResult
}

func (r *stdinLines) readLine(ctx context.Context) (string, error) {
	r.once.Do(func() {
		r.lines = make(chan lineResult)
		go func() {
			sc := bufio.NewScanner(r.r)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				r.lines <- lineResult{line: sc.Text()}
			}
			err := io.EOF
			if sc.Err() != nil {
				err = fmt.Errorf("read stdin: %w", sc.Err())
			}
			for {
				r.lines <- lineResult{err: err}
			}
		}()
	})
	if r.prompt != nil {
		fmt.Fprint(r.prompt, replPrompt)
	}
	return r.next(ctx)
}

func (r *stdinLines) next(ctx context.Context) (string, error) {
	select {
	case l := <-r.lines:
		return l.line, l.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// approver asks on r.prompt and reads the answer as the next line, so no
// second reader of the terminal is left to steal the next task's line.
func (r *stdinLines) approver() safety.Prompter {
	return safety.PrompterFunc(func(ctx context.Context, req safety.Request) (safety.Decision, error) {
		fmt.Fprint(r.prompt, safety.FormatRequest(req)+"Run it? [y/N/a=always] ")
		answer, err := r.next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return safety.Decision{Reason: "denied by user"}, nil
		case err != nil:
			return safety.Decision{}, err
		}
		return decideAnswer(answer), nil
	})
}

func (r *stdinLines) addHistory(string) {}
func (r *stdinLines) close()            {}

// termLines is the interactive prompt: line editing and a history kept in
// $XDG_STATE_HOME/agent/repl_history (mode 0600: tasks may name secrets).
// Prompts and approvals never overlap: approvals come while a task runs.
type termLines struct {
	l        *liner.State
	history  string
	warnings io.Writer
}

func newTermLines(stderr io.Writer) *termLines {
	r := &termLines{l: liner.NewLiner(), warnings: stderr}
	r.l.SetCtrlCAborts(true)
	if dir, err := statedir.Dir(); err == nil {
		r.history = filepath.Join(dir, "repl_history")
		if f, err := os.Open(r.history); err == nil {
			r.l.ReadHistory(f)
			f.Close()
		}
	}
	return r
}

// prompt asks with p until an answer, Ctrl-C, Ctrl-D or ctx's end.
func (r *termLines) prompt(ctx context.Context, p string) (string, error) {
	ch := make(chan lineResult, 1)
	go func() {
		line, err := r.l.Prompt(p)
		ch <- lineResult{line, err}
	}()
	select {
	case l := <-ch:
		return l.line, l.err
	case <-ctx.Done(): // agent is exiting (SIGTERM): close restores the terminal
		return "", ctx.Err()
	}
}

func (r *termLines) readLine(ctx context.Context) (string, error) { return r.prompt(ctx, replPrompt) }

func (r *termLines) addHistory(line string) { r.l.AppendHistory(line) }

func (r *termLines) close() {
	if r.history != "" {
		if err := writeHistory(r.l, r.history); err != nil {
			fmt.Fprintf(r.warnings, "agent: REPL history: %v\n", err)
		}
	}
	r.l.Close()
}

func writeHistory(l *liner.State, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := l.WriteHistory(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// Approve asks for an approval at the REPL's own prompt: liner holds the
// terminal in raw mode for the whole session, so /dev/tty line reading
// would not see Enter, and a reader left behind would steal the next
// task's keystrokes. Ctrl-C here cancels the task.
func (r *termLines) approver(out io.Writer, cancelTask func()) safety.Prompter {
	return safety.PrompterFunc(func(ctx context.Context, req safety.Request) (safety.Decision, error) {
		if err := ctx.Err(); err != nil {
			return safety.Decision{}, err
		}
		fmt.Fprint(out, safety.FormatRequest(req))
		answer, err := r.prompt(ctx, "Run it? [y/N/a=always] ")
		switch {
		case errors.Is(err, liner.ErrPromptAborted):
			cancelTask()
			return safety.Decision{}, context.Canceled
		case errors.Is(err, io.EOF):
			return safety.Decision{Reason: "denied by user"}, nil
		case err != nil:
			return safety.Decision{}, fmt.Errorf("read answer: %w", err)
		}
		return decideAnswer(answer), nil
	})
}

// decideAnswer reads an answer to "Run it? [y/N/a=always]" as
// safety.LinePrompter does.
func decideAnswer(answer string) safety.Decision {
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return safety.Decision{Allowed: true, Reason: "approved by user"}
	case "a", "always":
		return safety.Decision{Allowed: true, Always: true, Reason: "approved by user for identical steps in this task"}
	}
	return safety.Decision{Reason: "denied by user"}
}

// interactive says whether the REPL talks to a person: stdin and stdout
// are terminals liner can drive.
func (a *app) interactive() bool {
	in, ok1 := a.stdin.(*os.File)
	out, ok2 := a.stdout.(*os.File)
	return ok1 && ok2 && in == os.Stdin && out == os.Stdout && isTerminal(in) && isTerminal(out) && liner.TerminalSupported()
}

// runREPL is agent without a command: the `Agent > ` prompt. One
// connection and one executor serve the whole session, so later tasks see
// the variables earlier ones saved, and the model is told what they did.
// Ctrl-C cancels the running task (its remote processes are killed, as
// with -c) and returns to the prompt; at the prompt it clears the line.
// exit, quit or Ctrl-D leave with status 0.
//
// Without a terminal on stdin, tasks are read line by line from it, as a
// script: SIGINT cancels the running task and ends the session (130), and
// at the end the status is the worst task's — 1 when a task failed, else
// 4 when one needed an approval that could not be given, else 0.
func runREPL(ctx context.Context, a *app, o taskOptions) error {
	if o.batch.inv.given() {
		return usagef("-i: the REPL works on one host; give the task with -c to run it across the inventory")
	}
	if o.savePlan != "" {
		// A REPL task may use variables an earlier task saved: its steps
		// alone would not replay.
		return usagef("--save-plan works with -c TASK, not in the REPL")
	}
	// Connect first: a host-key or passphrase question needs the terminal
	// in its normal mode, and liner takes it over.
	t, err := a.newTaskRunner(ctx, o)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.conv.Describe(ctx); err != nil {
		return err
	}
	lines := &stdinLines{r: a.stdin}
	var in lineReader = lines
	var term *termLines
	ttyIn := false
	if f, ok := a.stdin.(*os.File); ok && isTerminal(f) {
		ttyIn = true
	}
	switch {
	case a.interactive():
		term = newTermLines(a.stderr)
		in = term
	case ttyIn:
		lines.prompt = a.stderr
		t.setPrompter(lines.approver())
	}
	defer in.close()
	var mu sync.Mutex
	var cancelTask context.CancelFunc
	cancelRunning := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if cancelTask != nil {
			cancelTask()
			// A person at a terminal gets the prompt back; a script read
			// from a pipe or file stops (Main cancels the session: 130).
			return ttyIn
		}
		// At liner's prompt Ctrl-C is a key, so this is a stray SIGINT:
		// ignored. At a plain terminal's prompt the terminal has dropped
		// the line: prompt again. Reading a pipe or file: stop.
		if ttyIn && term == nil {
			fmt.Fprint(a.stderr, "\n"+replPrompt)
		}
		return ttyIn
	}
	if term != nil {
		t.setPrompter(term.approver(a.stdout, func() { cancelRunning() }))
	}
	a.onInterrupt.Store(&cancelRunning)
	defer a.onInterrupt.Store(nil)
	chatty := term != nil && !o.json // --json: only the prompt joins the JSON on stdout
	if chatty {
		fmt.Fprintf(a.stdout, "agent %s on %s — type a task, or exit (status 0) to leave. Ctrl-C stops a running task.\n", version, t.steps.Name)
	}
	worst := 0 // the exit status of the worst task, for a script on stdin
	end := func() error {
		replBye(a, t, chatty)
		if ttyIn || worst == 0 {
			return nil
		}
		return exitError{code: worst}
	}
	for {
		line, err := in.readLine(ctx)
		switch {
		case errors.Is(err, liner.ErrPromptAborted):
			continue // Ctrl-C at the prompt: the line is dropped
		case errors.Is(err, io.EOF):
			if term != nil {
				fmt.Fprintln(a.stdout)
			}
			return end()
		case err != nil:
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		action, task := parseREPLLine(line)
		if action == replSkip {
			continue
		}
		if action == replExit {
			return end()
		}
		in.addHistory(strings.TrimSpace(line))
		if action == replShell && task == "" {
			fmt.Fprintln(a.stderr, "agent: '!' runs a command on the target without the model, e.g. !df -h")
			continue
		}
		tctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		cancelTask = cancel
		mu.Unlock()
		var ok, denied bool
		if action == replShell {
			ok, denied, err = t.shell(tctx, task)
		} else {
			var res stepgen.Result
			res, err = t.run(tctx, task)
			ok, denied = res.Success && res.Denied == 0, res.Denied > 0
		}
		mu.Lock()
		cancelTask = nil
		mu.Unlock()
		interrupted := tctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		what := "task"
		if action == replShell {
			what = "command"
		}
		switch {
		case interrupted:
			fmt.Fprintf(a.stderr, "agent: %s interrupted\n", what)
		case err != nil:
			fmt.Fprintln(a.stderr, "agent:", err)
		}
		switch {
		case interrupted || err == nil && ok:
		case err == nil && denied:
			if worst == 0 {
				worst = exitDenied
			}
		default:
			worst = exitFailed
		}
	}
}

// replBye closes an interactive session with what it cost.
func replBye(a *app, t *taskRunner, interactive bool) {
	n, c := t.conv.Tasks(), t.conv.Commands()
	if !interactive || n+c == 0 {
		return
	}
	what := fmt.Sprintf("%d %s", n, pluralize(n, "task"))
	if c > 0 {
		what += fmt.Sprintf(" and %d %s", c, pluralize(c, "command"))
	}
	u := t.client.Usage()
	fmt.Fprintf(a.stdout, "%s this session; LLM: %d %s, %d prompt + %d completion tokens\n",
		what, u.Calls, pluralize(u.Calls, "call"), u.Prompt, u.Completion)
}
