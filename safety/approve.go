package safety

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Mode is the --approve setting: which risk levels run without asking.
// The order matters: a mode lets every level up to its own run unattended.
// The zero value is ModeNever, so a forgotten setting fails closed.
type Mode int

const (
	// ModeNever runs safe steps only; anything else is denied without
	// asking. The default without a terminal.
	ModeNever Mode = iota
	// ModeAsk runs safe steps and asks a person about medium and high ones.
	// The default on a terminal.
	ModeAsk
	// ModeMedium also runs medium steps unattended; high ones are still asked
	// about when a person can answer and denied otherwise.
	ModeMedium
	// ModeAll runs everything, high risk included, without asking.
	ModeAll
)

// DefaultMode is ModeAsk when a person can answer on a terminal, ModeNever otherwise.
func DefaultMode(terminal bool) Mode {
	if terminal {
		return ModeAsk
	}
	return ModeNever
}

// String returns the flag spelling: "never", "ask", "medium" or "all".
func (m Mode) String() string {
	switch m {
	case ModeNever:
		return "never"
	case ModeAsk:
		return "ask"
	case ModeMedium:
		return "medium"
	case ModeAll:
		return "all"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode is the inverse of String.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "never":
		return ModeNever, nil
	case "ask":
		return ModeAsk, nil
	case "medium":
		return ModeMedium, nil
	case "all":
		return ModeAll, nil
	}
	return ModeNever, fmt.Errorf("unknown approval mode %q (want ask, never, medium or all)", s)
}

// Set implements pflag.Value and flag.Value.
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type implements pflag.Value.
func (m *Mode) Type() string { return "mode" }

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Mode) UnmarshalText(b []byte) error { return m.Set(string(b)) }

// Request is one resolved step waiting for a decision.
type Request struct {
	Host string
	Tool string
	// Params are the resolved parameters; with Tool they identify the step
	// for "always" answers.
	Params map[string]any
	// Command is the resolved shell command (execute_command and the
	// structured tools), Path the resolved file of a file tool.
	Command string
	Path    string
	Risk    Assessment
	// Diff previews a file change (unified diff); empty for commands.
	Diff string
	// As is the user the step runs as through become (sudo); "" for the
	// login user. An answer for one user never covers another.
	As string
}

// Who decided.
const (
	ByPolicy = "policy"
	ByUser   = "user"
)

// Decision is the answer to a Request.
type Decision struct {
	Allowed bool
	// Reason says why, in words fit for the observation and the audit log.
	Reason string
	// By is ByPolicy or ByUser.
	By string
	// Asked is true when a person answered this request just now.
	Asked bool
	// Always: from a Prompter, "allow every identical resolved step for the
	// rest of the run"; from Decide, the answer came from or was stored
	// as such a remembered answer.
	Always bool
}

// Outcome is the audit log's word for the decision: "allowed" or "denied".
func (d Decision) Outcome() string {
	if d.Allowed {
		return "allowed"
	}
	return "denied"
}

// Prompter asks a person about a request. It must return promptly with
// ctx.Err() when ctx is done. A returned error is treated as a denial.
type Prompter interface {
	Approve(ctx context.Context, req Request) (Decision, error)
}

// PrompterFunc adapts a function to Prompter.
type PrompterFunc func(ctx context.Context, req Request) (Decision, error)

// Approve calls f.
func (f PrompterFunc) Approve(ctx context.Context, req Request) (Decision, error) {
	return f(ctx, req)
}

// Scope is how long, and over which hosts, the Approver remembers a
// person's answers: the one "always" memory of agent.
type Scope int

const (
	// ScopeSession remembers an "always" answer for the Approver's
	// lifetime (a run, a REPL session), keyed by tool and resolved
	// parameters (StepKey).
	ScopeSession Scope = iota
	// ScopeTask remembers an "always" answer until NewTask: in a REPL each
	// task asks again.
	ScopeTask
	// ScopeBatch remembers every answer, yes or no ("always" is yes), for
	// every host where the same resolved step comes up: same StepKey, and
	// for a step whose meaning depends on the login (a command, which runs
	// in the user's home; a relative or ~ path) the same login user
	// (WithLogins).
	ScopeBatch
)

// ApproverOption configures an Approver.
type ApproverOption func(*Approver)

// WithScope sets how answers are remembered (default ScopeSession).
func WithScope(s Scope) ApproverOption { return func(a *Approver) { a.scope = s } }

// WithLogins gives the login user of each host, for ScopeBatch: a step
// that depends on the login is the same step only for the same user.
func WithLogins(users map[string]string) ApproverOption {
	return func(a *Approver) { a.logins = users }
}

// Approver applies a Mode to requests, asking its Prompter where the mode
// says so. It is safe for concurrent use: one question is on screen at a
// time, and answers are remembered as its Scope says, so a batch run asks
// once per distinct resolved step.
//
// The rules, per risk level:
//
//	         never   ask     medium  all
//	safe     run     run     run     run
//	medium   deny    ask     run     run
//	high     deny    ask     ask     run
//
// "ask" is a denial when there is no Prompter (no terminal). High risk
// stays a question in ModeMedium: --approve medium is meant for
// unattended file writes, not for sudo or rm -r.
type Approver struct {
	mode     Mode
	prompter Prompter
	scope    Scope
	logins   map[string]string
	turn     chan struct{} // holds one token: whose turn it is to ask

	mu      sync.Mutex
	answers map[string]Decision // remembered answers by key
}

// NewApprover returns an Approver for mode. prompter may be nil when no
// person can answer; requests that need one are then denied.
func NewApprover(mode Mode, prompter Prompter, opts ...ApproverOption) *Approver {
	a := &Approver{mode: mode, prompter: prompter, turn: make(chan struct{}, 1), answers: map[string]Decision{}}
	for _, o := range opts {
		o(a)
	}
	a.turn <- struct{}{}
	return a
}

// NewTask starts a new task: with ScopeTask the "always" answers are
// forgotten; otherwise nothing changes.
func (a *Approver) NewTask() {
	if a.scope != ScopeTask {
		return
	}
	a.mu.Lock()
	a.answers = map[string]Decision{}
	a.mu.Unlock()
}

// SetPrompter replaces the prompter (nil: nobody can answer). Call it
// before the first Decide: a front end that learns only after connecting
// who answers (a REPL's line editor) sets it then.
func (a *Approver) SetPrompter(p Prompter) { a.prompter = p }

// Prompter is the approver's prompter, nil when nobody can answer.
func (a *Approver) Prompter() Prompter { return a.prompter }

// Mode returns the approver's mode.
func (a *Approver) Mode() Mode { return a.mode }

// Decide returns whether req may run. The error is non-nil only when ctx
// ended while a person was being asked (the run is interrupted); the
// decision is then a denial too. Any other prompter failure, such as
// closed input, is a denial with the failure as its reason.
func (a *Approver) Decide(ctx context.Context, req Request) (Decision, error) {
	lvl := req.Risk.Level
	switch {
	case lvl <= Safe:
		return Decision{Allowed: true, By: ByPolicy, Reason: "safe"}, nil
	case lvl == Medium && a.mode >= ModeMedium:
		return Decision{Allowed: true, By: ByPolicy, Reason: "medium risk allowed by --approve " + a.mode.String()}, nil
	case a.mode >= ModeAll:
		return Decision{Allowed: true, By: ByPolicy, Reason: lvl.String() + " risk allowed by --approve all"}, nil
	case a.mode == ModeNever || a.prompter == nil:
		return Decision{By: ByPolicy, Reason: needsApproval(req.Risk)}, nil
	}
	return a.ask(ctx, req)
}

func (a *Approver) ask(ctx context.Context, req Request) (Decision, error) {
	key, keyed := a.key(req)
	if d, ok := a.remembered(key, keyed); ok {
		return d, nil
	}
	select {
	case <-a.turn:
	case <-ctx.Done():
		return interrupted(ctx)
	}
	defer func() { a.turn <- struct{}{} }()
	// Another goroutine may have got an answer while this one waited.
	if d, ok := a.remembered(key, keyed); ok {
		return d, nil
	}
	if err := ctx.Err(); err != nil {
		return interrupted(ctx)
	}
	d, err := a.prompter.Approve(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return interrupted(ctx)
	case err != nil:
		// Nobody answered (no terminal, an MCP client that cannot ask):
		// the refusal is the policy's, not a person's.
		return Decision{By: ByPolicy, Reason: fmt.Sprintf("approval failed: %v; %s", err, needsApproval(req.Risk))}, nil
	}
	d.By, d.Asked = ByUser, true
	if a.scope == ScopeBatch {
		// every answer holds for every host: nothing more to remember as
		// "always"
		if keyed {
			a.remember(key, d)
		}
		d.Always = false
		if d.Reason == "" && !d.Allowed {
			d.Reason = "denied by user"
		}
		if d.Reason == "" {
			d.Reason = "approved by user"
		}
		return d, nil
	}
	if !d.Allowed {
		d.Always = false
		if d.Reason == "" {
			d.Reason = "denied by user"
		}
		return d, nil
	}
	if d.Always && keyed {
		a.remember(key, d)
		if d.Reason == "" {
			d.Reason = "approved by user for identical steps in this run"
		}
	}
	d.Always = d.Always && keyed
	if d.Reason == "" {
		d.Reason = "approved by user"
	}
	return d, nil
}

// key is req's key among the remembered answers.
func (a *Approver) key(req Request) (string, bool) {
	key, ok := StepKey(req)
	if ok && a.scope == ScopeBatch && dependsOnLogin(req) {
		key += "\x00user=" + a.logins[req.Host]
	}
	return key, ok
}

// dependsOnLogin reports whether what req does depends on the remote user
// and home: a command without an absolute cwd (relative paths, ~ and $HOME
// are the login's), a file tool's path that is relative or starts with ~.
func dependsOnLogin(req Request) bool {
	if req.Command != "" {
		cwd, _ := req.Params["cwd"].(string)
		return !strings.HasPrefix(cwd, "/") || strings.ContainsAny(req.Command, "~$")
	}
	for _, k := range []string{"file_path", "remote_path", "local_path", "path"} {
		if v, ok := req.Params[k].(string); ok && !strings.HasPrefix(v, "/") {
			return true
		}
	}
	return !strings.HasPrefix(req.Path, "/")
}

func (a *Approver) remember(key string, d Decision) {
	a.mu.Lock()
	a.answers[key] = d
	a.mu.Unlock()
}

// remembered returns the remembered answer to key, as the step's decision.
func (a *Approver) remembered(key string, keyed bool) (Decision, bool) {
	if !keyed {
		return Decision{}, false
	}
	a.mu.Lock()
	d, ok := a.answers[key]
	a.mu.Unlock()
	if !ok {
		return Decision{}, false
	}
	switch {
	case a.scope == ScopeBatch && d.Allowed:
		return Decision{Allowed: true, By: ByUser, Reason: "approved by user for all hosts"}, true
	case a.scope == ScopeBatch:
		return Decision{By: ByUser, Reason: "denied by user for all hosts"}, true
	case a.scope == ScopeTask:
		return Decision{Allowed: true, By: ByUser, Reason: "approved by user earlier in this task (always)"}, true
	}
	return Decision{Allowed: true, By: ByUser, Always: true, Reason: "approved by user earlier in this run (always)"}, true
}

func interrupted(ctx context.Context) (Decision, error) {
	err := context.Cause(ctx)
	return Decision{By: ByUser, Reason: "approval interrupted"}, fmt.Errorf("ask for approval: %w", err)
}

// needsApproval explains a denial for lack of approval and how to give it.
func needsApproval(r Assessment) string {
	why := r.Level.String() + " risk"
	if len(r.Reasons) > 0 {
		why += ": " + strings.Join(r.Reasons, "; ")
	}
	mode := "all"
	if r.Level == Medium {
		mode = "medium"
	}
	return why + " — needs approval; run with --approve " + mode + " or answer y on a terminal"
}

// StepKey identifies a resolved step for "always" answers: the tool, its
// resolved parameters (as canonical JSON: map keys sorted), the resolved
// command and path, and a hash of the change previewed (Diff): the same
// edit_file parameters that change a file otherwise are another step. ok
// is false when the parameters cannot be encoded; such a step is never
// remembered.
func StepKey(req Request) (key string, ok bool) {
	diff := ""
	if req.Diff != "" {
		sum := sha256.Sum256([]byte(req.Diff))
		diff = hex.EncodeToString(sum[:])
	}
	b, err := json.Marshal(struct {
		Tool    string         `json:"t"`
		Params  map[string]any `json:"p"`
		Command string         `json:"c"`
		Path    string         `json:"f"`
		Diff    string         `json:"d,omitempty"`
		As      string         `json:"as,omitempty"`
	}{req.Tool, req.Params, req.Command, req.Path, diff, req.As})
	if err != nil {
		return "", false
	}
	return string(b), true
}

// LinePrompter asks on a line-oriented stream: it writes the request to
// Out and reads one line from In: "y" or "yes" allows, "a" or "always"
// allows this and every identical resolved step for the rest of the run,
// anything else (an empty line too) denies. Control characters in what it
// shows are escaped, so a hostile command cannot rewrite the terminal.
//
// A LinePrompter reads In from one background goroutine started on first
// use, so Approve can return as soon as ctx is done; a line typed after
// that answers the next question. Use it by pointer; don't copy it after
// first use.
type LinePrompter struct {
	In  io.Reader
	Out io.Writer

	once  sync.Once
	lines chan lineResult
}

type lineResult struct {
	line string
	err  error
}

var _ Prompter = (*LinePrompter)(nil)

// Approve shows req and waits for an answer or for ctx to end.
func (p *LinePrompter) Approve(ctx context.Context, req Request) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	if _, err := io.WriteString(p.Out, FormatRequest(req)+"Run it? [y/N/a=always] "); err != nil {
		return Decision{}, fmt.Errorf("write prompt: %w", err)
	}
	p.once.Do(p.start)
	var r lineResult
	select {
	case r = <-p.lines:
	case <-ctx.Done():
		fmt.Fprintln(p.Out)
		return Decision{}, ctx.Err()
	}
	if r.err != nil && r.line == "" {
		if r.err == io.EOF {
			return Decision{}, fmt.Errorf("read answer: input closed: %w", r.err)
		}
		return Decision{}, fmt.Errorf("read answer: %w", r.err)
	}
	switch strings.ToLower(strings.TrimSpace(r.line)) {
	case "y", "yes":
		return Decision{Allowed: true, Reason: "approved by user"}, nil
	case "a", "always":
		return Decision{Allowed: true, Always: true, Reason: "approved by user for identical steps in this run"}, nil
	}
	return Decision{Reason: "denied by user"}, nil
}

// start reads In line by line, unbuffered beyond the line, until an error.
func (p *LinePrompter) start() {
	p.lines = make(chan lineResult)
	go func() {
		var line []byte
		buf := make([]byte, 1)
		for {
			n, err := p.In.Read(buf)
			if n == 1 {
				if buf[0] == '\n' {
					p.lines <- lineResult{line: string(line)}
					line = line[:0]
					continue
				}
				if len(line) < 4096 {
					line = append(line, buf[0])
				}
			}
			if err != nil {
				// The last, unterminated line still counts; then the
				// error is reported to every later question.
				p.lines <- lineResult{line: string(line), err: err}
				for {
					p.lines <- lineResult{err: err}
				}
			}
		}
	}()
}

// FormatRequest renders a request the way a person should see it before
// answering: where, what (the resolved command, or the file and its diff),
// the risk and its reasons. Control characters are escaped.
func FormatRequest(req Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s risk: %s", strings.ToUpper(req.Risk.Level.String()), terminalSafe(req.Tool))
	if req.Host != "" {
		fmt.Fprintf(&b, " on %s", terminalSafe(req.Host))
	}
	if req.As != "" {
		fmt.Fprintf(&b, " as %s", terminalSafe(req.As))
	}
	b.WriteString("\n")
	if req.Command != "" {
		fmt.Fprintf(&b, "  command: %s\n", terminalSafe(req.Command))
	}
	if req.Path != "" {
		fmt.Fprintf(&b, "  file: %s\n", terminalSafe(req.Path))
	}
	for _, r := range req.Risk.Reasons {
		fmt.Fprintf(&b, "  - %s\n", terminalSafe(r))
	}
	if req.Diff != "" {
		d := terminalSafe(req.Diff)
		b.WriteString(d)
		if !strings.HasSuffix(d, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// terminalSafe escapes everything a terminal would not print as itself
// (escape sequences, carriage returns, bidi overrides), keeping newlines
// and tabs.
func terminalSafe(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && !unicode.IsPrint(r) && r != ' ' {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t' || r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
