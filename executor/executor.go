package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Config is what an Executor needs. Transport is required; the
// rest have usable zero values, noted per field.
type Config struct {
	Transport transport.Transport
	// Registry runs the tools. When nil, the executor builds
	// tools.Default(Policy) wired to itself: check_condition evaluates over
	// Vars, file changes are journaled in Journal first, and home lookups
	// are shared with risk classification. A Registry given here must be
	// wired by the caller (tools.WithBeforeChange(e.BeforeChange),
	// tools.WithConditionEvaluator(vars.Eval)).
	Registry *tools.Registry
	// ToolOptions are extra options for the registry the executor builds
	// (e.g. tools.WithProgress).
	ToolOptions []tools.Option
	// Policy classifies risk; the zero Policy is not useful, use
	// safety.DefaultPolicy().
	Policy safety.Policy
	// Approver decides on medium and high steps; nil denies them all
	// (safety.ModeNever without a prompter).
	Approver *safety.Approver
	// Audit receives one line per step, denied and skipped ones included;
	// nil: no audit log.
	Audit *audit.Log
	// Redact takes the host's secrets out of the audit line's parameters,
	// output, error and reasons before the log's own redaction
	// (redact.String): the engine's Redactor, which knows the values
	// of the host's secret variables. nil: the log's redaction only.
	Redact func(string) string
	// Secrets is the session's secret set: the files a step reads are
	// harvested into it before the step runs (harvest.go); nil: none.
	Secrets *redact.Set
	// Journal records a file's previous content before any change; nil: no
	// undo journal. A Journal that fails refuses the change.
	Journal *journal.Journal
	// Started, when set, is given the process group ID of each command a
	// step starts on the target (transport.WithStarted): the engine keeps
	// it in the session record, so that what a killed agent left running
	// can be reaped (mcpserver/reap.go).
	Started func(pgid int)
	// Durable, when set, returns once the step's start record (emitted
	// with its step_start event) is on disk: called before the step's
	// effect — for a command on a confined thread, while the thread is
	// being confined — so that its fsync overlaps that work. An error
	// refuses the step.
	Durable func() error
	// Ahead, when set, receives before a batch's commands are sent the
	// step_start events of its steps after the first, which are emitted
	// later, each once the steps before it ended (batch.go): the session
	// record writes them then, so that Durable covers them too.
	Ahead func(ev event.Event)
	// LocalJournal records the operator's files a download writes, when
	// the Transport is not this machine (the session's journal of host
	// "local"); with a local Transport, Journal does. nil: not journaled.
	LocalJournal *journal.Journal
	// Session is the session id written to the audit log and events.
	Session string
	// Host names the host in events and the audit log; default
	// Transport.Host().Name.
	Host string
	// Emit receives every event, synchronously; nil: none.
	Emit event.Sink
	// DryRun runs safe steps only; medium and high ones are shown (file
	// changes as a diff) and recorded as skipped.
	DryRun bool
	// Vars is the execution context; nil: a new one. --var values go in
	// before the run and take precedence over a plan's vars.
	Vars *execctx.Context
	// Phase is the phase number RunStep reports until RunPlan sets it.
	Phase int
	// Become is the host as the become user (transport/become): the
	// transport of the steps that escalate — every step when BecomeAll,
	// else the plan steps that say become: true. Nil: a step asking to
	// escalate fails.
	Become transport.Becomer
	// BecomeAll runs every step through Become (--become, ansible_become).
	BecomeAll bool
	// Permissions limit what every step may read, write, run and connect
	// to (--allow-write); nil: no limit. A plan's own `permissions:` are
	// checked as well, from RunPlan on.
	Permissions *safety.Permissions
	// RecordNeeds: every step that runs reports what it needed
	// (StepResult.Needs), for --save-plan's permissions.
	RecordNeeds bool
	// ReadOnly (--read-only) denies every step that is not safe and every
	// file tool that writes, whatever the Approver would say.
	ReadOnly bool
	// Confiner holds the commands of steps nobody approved to what their
	// level allows (package confine); nil: they run unconfined.
	Confiner Confiner
	// BecomeConfiner, when set, holds the commands of steps that run
	// through Become instead of Confiner: its launcher and rules are the
	// become user's own, set up through become (a non-root become user
	// cannot reach the login user's private launcher directory).
	BecomeConfiner Confiner
}

// confinerFor is the Confiner of the commands of a step that runs on tr.
func (e *Executor) confinerFor(tr transport.Transport) Confiner {
	if e.cfg.BecomeConfiner != nil && e.cfg.Become != nil && tr == transport.Transport(e.cfg.Become) {
		return e.cfg.BecomeConfiner
	}
	return e.cfg.Confiner
}

// Confiner holds the commands of a step that no person approved to what
// its level allows: the classifier decides who must approve, the kernel
// enforces what an unapproved step can touch.
type Confiner interface {
	// Confine returns how the step's commands are confined at level: a
	// launcher's argv (transport.Command.Wrap) or a confined thread of
	// agent for the local transport; the zero value runs them as they are
	// (confine.None, or a host that cannot enforce). An error refuses the
	// step.
	Confine(ctx context.Context, level confine.Level) (confine.Confinement, error)
	// Explain returns the observation for a confined command whose stderr
	// shows a refusal, "" when none.
	Explain(level confine.Level, stderr string) string
	// FileBlocked returns the observation for a file tool that would read
	// (or, with write, write) the file real (links resolved) outside what
	// the operator's sandbox allows, "" when it may (or no sandbox
	// applies). Called after Confine.
	FileBlocked(write bool, real string) string
	// LevelBlocked returns the observation for a file tool of a step at
	// level that would read (or, with write, write or create; a read
	// of a directory, dir, lists it) real where the rules a command of
	// that level runs under do not allow it; "" when they do, at
	// confine.None, or when the host does not enforce. An error refuses
	// the step.
	LevelBlocked(ctx context.Context, level confine.Level, write, dir bool, real string) (string, error)
	// Sandboxed reports whether the operator's sandbox applies (the file
	// tools' paths are then resolved and checked).
	Sandboxed() bool
}

// Executor runs steps on one host: condition, templating, validation,
// risk, approval, undo journal, the tool, the record, the audit line and
// the event, in that order (see RunStep). It is not safe for concurrent
// use; run one per host.
type Executor struct {
	cfg   Config
	reg   *tools.Registry
	vars  *execctx.Context
	host  string
	phase int
	n     int // steps started
	guard Guard
	// held takes the events the executor emits while a batch's later
	// step is prepared (batch.go); nil: they go out.
	held *heldEvents
	// deferAudit: the end lines written now leave their fsync to the
	// next chunk of a batch run in turn (batch.go endNext).
	deferAudit bool

	// dryUnset holds variables that a step skipped by --dry-run would have
	// set: later steps that need them are skipped too, not failed.
	dryUnset map[string]bool
	// links is, per home, its files with other hard links and where the
	// symbolic links in its protected places lead (homeLinks), found
	// once, in one round trip.
	links map[string]foundLinks
	// dryWrote maps the files a step skipped by --dry-run would have
	// written or edited to that step's number: a later read of one shows
	// what it would read instead of failing on a file not there yet.
	dryWrote map[string]int

	homeOnce sync.Mutex
	home     string

	// perms are the declared permissions every step is checked against.
	perms []*safety.Permissions
}

// New returns an Executor; it panics without a Transport, which is a
// programming error.
func New(cfg Config) *Executor {
	if cfg.Transport == nil {
		panic("executor: Config.Transport is nil")
	}
	e := &Executor{cfg: cfg, vars: cfg.Vars, host: cfg.Host, phase: cfg.Phase, dryUnset: map[string]bool{}, dryWrote: map[string]int{}}
	if e.vars == nil {
		e.vars = execctx.New()
	}
	if e.host == "" {
		e.host = cfg.Transport.Host().Name
	}
	if cfg.Permissions != nil {
		e.perms = append(e.perms, cfg.Permissions)
	}
	if e.cfg.Approver == nil {
		e.cfg.Approver = safety.NewApprover(safety.ModeNever, nil)
	}
	e.reg = cfg.Registry
	if e.reg == nil {
		opts := append([]tools.Option{
			tools.WithBeforeChange(e.BeforeChange),
			tools.WithConditionEvaluator(e.vars.Eval),
			tools.WithSessionFiles(e.vars.FindFiles),
			tools.WithHome(e.homeDirOf),
		}, cfg.ToolOptions...)
		e.reg = tools.Default(cfg.Policy, opts...)
	}
	return e
}

// Approver decides on medium and high steps.
func (e *Executor) Approver() *safety.Approver { return e.cfg.Approver }

// Vars returns the execution context the executor records into.
func (e *Executor) Vars() *execctx.Context { return e.vars }

// SetPhase sets the phase number the steps RunStep runs next report, for
// callers that drive phases themselves (the model's adaptive loop).
func (e *Executor) SetPhase(n int) { e.phase = n }

// Guard may refuse a resolved step before the approver decides: ok with
// its decision (a denial) replaces the approver's; !ok leaves the step to
// the approver. engine uses it to ask a person again about a step whose
// outcome is unknown (agent resume).
type Guard func(ctx context.Context, req safety.Request) (d safety.Decision, ok bool, err error)

// SetGuard sets the executor's Guard (nil: none).
func (e *Executor) SetGuard(g Guard) { e.guard = g }

// decide is the Guard's decision, else the approver's.
func (e *Executor) decide(ctx context.Context, req safety.Request) (safety.Decision, error) {
	if e.guard != nil {
		if d, ok, err := e.guard(ctx, req); ok || err != nil {
			return d, err
		}
	}
	return e.cfg.Approver.Decide(ctx, req)
}

// SkipSteps numbers the next step n+1: a resumed plan (engine.ResumePlan)
// keeps its steps' numbers.
func (e *Executor) SkipSteps(n int) { e.n = n }

// DryRun reports whether the executor only previews medium and high steps.
func (e *Executor) DryRun() bool { return e.cfg.DryRun }

// Registry returns the tools the executor runs.
func (e *Executor) Registry() *tools.Registry { return e.reg }

// journalError marks a failure of the undo journal: the change was refused.
type journalError struct{ err error }

func (j *journalError) Error() string { return j.err.Error() }
func (j *journalError) Unwrap() error { return j.err }

// BeforeChange is the tools.BeforeChangeFunc that records a file's
// previous content in the Journal before a tool changes it; an error
// refuses the change.
//
// The journal keeps setuid, setgid and sticky bits, which
// FileChange.OldMode lacks: they come from a Stat of the file.
func (e *Executor) BeforeChange(ctx context.Context, tr transport.Transport, ch tools.FileChange, old []byte) error {
	if ch.Local {
		j := e.localJournal()
		if j == nil {
			return nil
		}
		if err := j.Record(ctx, ch.Path, old, ch.Existed, ch.OldMode); err != nil {
			return &journalError{err}
		}
		return nil
	}
	if e.cfg.Journal == nil {
		return nil
	}
	as := ""
	if b, ok := transport.As[transport.Becomer](tr); ok {
		as = b.User()
	}
	mode := ch.OldMode
	if ch.Existed {
		if fi, err := tr.Stat(ctx, ch.Path); err == nil {
			mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		}
	}
	if err := e.cfg.Journal.RecordAs(ctx, ch.Path, old, ch.Existed, mode, as); err != nil {
		return &journalError{err}
	}
	return nil
}

// journalChanged records in the Journal the content a tool gave each file
// it changed, so that undo notices later changes by others. An upload's
// new content is the operator's file it copied.
func (e *Executor) journalChanged(ctx context.Context, cls classification, out tools.Output) error {
	var errs []error
	for _, fc := range out.FilesChanged {
		if fc.Local {
			if j := e.localJournal(); j != nil && fc.NewSHA256 != "" {
				errs = append(errs, j.Changed(ctx, fc.Path, fc.NewSHA256))
			}
			continue
		}
		if e.cfg.Journal == nil {
			continue
		}
		sum := fc.NewSHA256
		if lf, ok := localFile(cls.files); sum == "" && ok && lf.Op == safety.FileRead {
			var err error
			if sum, err = localSHA256(lf.Path); err != nil {
				errs = append(errs, fmt.Errorf("undo journal: %s: %w", fc.Path, err))
				continue
			}
		}
		if sum == "" {
			continue
		}
		if err := e.cfg.Journal.Changed(ctx, fc.Path, sum); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// localJournal is the journal of the operator's machine: Journal when
// the steps run here, else LocalJournal.
func (e *Executor) localJournal() *journal.Journal {
	if e.cfg.Transport != nil && e.cfg.Transport.Host().Kind == "local" {
		return e.cfg.Journal
	}
	return e.cfg.LocalJournal
}

func localSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// expectPreviewed returns ctx carrying, for each file of an approved
// preview, the content (its SHA-256) the person approved the diff
// against: the tool refuses the change when the file changed since.
func expectPreviewed(ctx context.Context, previewed []tools.FileChange) context.Context {
	for _, fc := range previewed {
		sum := fc.OldSHA256
		if sum == "" && !fc.Existed {
			sum = tools.AbsentSHA
		}
		if fc.Path != "" && sum != "" {
			ctx = tools.WithExpectedContent(ctx, fc.Path, sum)
		}
	}
	return ctx
}

// BecomeAll reports whether every step runs as the become user: the
// operator enabled become for the run (the model may then ask for it).
func (e *Executor) BecomeAll() bool { return e.cfg.BecomeAll && e.cfg.Become != nil }

// stepTransport is the transport st runs on and the user it runs as
// through become ("" for the login user).
func (e *Executor) stepTransport(st planner.Step) (transport.Transport, string, error) {
	if !st.Become && !e.cfg.BecomeAll {
		return e.cfg.Transport, "", nil
	}
	if e.cfg.Become == nil {
		return nil, "", errors.New("become: this run cannot run steps as another user (no become settings for this host)")
	}
	return e.cfg.Become, e.cfg.Become.User(), nil
}

// homeDirOf is the home directory of the user tr acts as: the become
// user's for the become transport, else the login user's.
func (e *Executor) homeDirOf(ctx context.Context, tr transport.Transport) (string, error) {
	if b, ok := transport.As[transport.Becomer](tr); ok {
		if hd, ok := transport.As[transport.HomeDirer](b); ok {
			h, err := hd.HomeDir(ctx)
			if err != nil {
				return "", fmt.Errorf("home directory of %s on %s: %w", b.User(), e.host, err)
			}
			return h, nil
		}
	}
	return e.homeDir(ctx)
}

// HomeDir is the target user's home directory, looked up once.
func (e *Executor) HomeDir(ctx context.Context) (string, error) { return e.homeDir(ctx) }

// homeDir is the target user's home, looked up once per executor: tools
// resolve "~" against it and risk classification needs the same answer.
func (e *Executor) homeDir(ctx context.Context) (string, error) {
	e.homeOnce.Lock()
	defer e.homeOnce.Unlock()
	if e.home != "" {
		return e.home, nil
	}
	tr := e.cfg.Transport
	var home string
	if hd, ok := transport.As[transport.HomeDirer](tr); ok {
		h, err := hd.HomeDir(ctx)
		if err != nil {
			return "", fmt.Errorf("home directory on %s: %w", e.host, err)
		}
		home = h
	} else {
		res, err := tr.Run(ctx, transport.Command{Command: `printf '%s\n' "$HOME"`})
		if err != nil {
			return "", fmt.Errorf("home directory on %s: %w", e.host, err)
		}
		home = trimNewline(res.Stdout)
		if res.ExitCode != 0 || len(home) == 0 || home[0] != '/' {
			return "", fmt.Errorf("home directory on %s: $HOME is not an absolute path", e.host)
		}
	}
	e.home = home
	return home, nil
}

func trimNewline(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return s[:n-1]
	}
	return s
}

func (e *Executor) emit(ev event.Event) {
	ev = e.filled(ev)
	if e.held != nil {
		e.held.emit(ev)
		return
	}
	e.cfg.Emit.Emit(ev)
}

// filled is ev with the host and session.
func (e *Executor) filled(ev event.Event) event.Event {
	ev.Host = e.host
	if ev.Session == "" {
		ev.Session = e.cfg.Session
	}
	return ev
}

// Summary is how a plan ended on one host.
type Summary struct {
	Host    string
	Session string
	// Success: every step ran ok or was skipped (or failed with ignore_errors).
	Success                     bool
	Steps                       int // steps that ended, whatever their status
	OK, Errors, Skipped, Denied int
	// Ignored counts the failed steps (in Errors too) marked ignore_errors.
	Ignored int
	// Failed is the step that stopped the plan (status error or denied),
	// nil when none did.
	Failed *StepResult
	// Err is the infrastructure error that stopped the run, if any.
	Err      error
	Duration time.Duration
}

// Count adds a step that ended with status st ("": the step did not end,
// nothing is counted).
func (s *Summary) Count(st execctx.Status) {
	if st == "" {
		return
	}
	s.Steps++
	switch st {
	case execctx.StatusOK:
		s.OK++
	case execctx.StatusError:
		s.Errors++
	case execctx.StatusSkipped:
		s.Skipped++
	case execctx.StatusDenied:
		s.Denied++
	}
}

// Event is the done event of s, with summary as its text.
func (s Summary) Event(summary string) event.Event {
	d := &event.Done{Status: "failed", Summary: summary, Text: s.Text(),
		Steps: s.Steps, OK: s.OK, Errors: s.Errors, Skipped: s.Skipped, Denied: s.Denied}
	if s.Success {
		d.Status = "success"
	}
	if s.Failed != nil {
		d.FailedStep = s.Failed.Step
	}
	return event.Event{Kind: event.KindDone, Host: s.Host, Session: s.Session, Done: d}
}

// Text is the one-line summary for the done event and the terminal.
func (s Summary) Text() string {
	counts := fmt.Sprintf("%d %s: %d ok, %d skipped, %d failed, %d denied", s.Steps, plural(s.Steps, "step"),
		s.OK, s.Skipped, s.Errors, s.Denied)
	if s.Ignored > 0 {
		counts += fmt.Sprintf(", %d failure%s ignored", s.Ignored, map[bool]string{true: "", false: "s"}[s.Ignored == 1])
	}
	switch {
	case errors.Is(s.Err, context.Canceled):
		if where, ok := strings.CutSuffix(s.Err.Error(), ": "+context.Canceled.Error()); ok {
			return fmt.Sprintf("interrupted: %s (%s)", where, counts)
		}
		return fmt.Sprintf("interrupted (%s)", counts)
	case s.Err != nil:
		return fmt.Sprintf("stopped: %v (%s)", s.Err, counts)
	case s.Failed != nil:
		f := s.Failed
		where := fmt.Sprintf("step %d (%s", f.Step, f.Tool)
		if f.Line > 0 {
			where += fmt.Sprintf(", line %d", f.Line)
		}
		where += ")"
		return fmt.Sprintf("stopped at %s: %s — %s (%s)", where, f.Status, oneLine(f.Observation, 200), counts)
	}
	return counts
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// RunPlan runs every step of p, phase by phase, and stops at the first
// step that fails (status error) or is denied: later steps were written
// assuming it succeeded — except a failed step marked ignore_errors, after
// which the run goes on (its failure is counted, and the run can still
// succeed). A skipped step (false condition, or --dry-run)
// does not stop the plan. The plan's vars are set first unless Vars
// already holds them (--var wins). p should have passed Validate.
//
// The error is non-nil only when the run broke (lost connection,
// interruption, a failing audit log); the Summary says how far it got
// either way, and a done event is always emitted.
func (e *Executor) RunPlan(ctx context.Context, p *planner.Plan) (Summary, error) {
	start := time.Now()
	sum := Summary{Host: e.host, Session: e.cfg.Session}
	if p.Permissions != nil && !slices.Contains(e.perms, p.Permissions) {
		e.perms = append(e.perms, p.Permissions)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Vars)) {
		if _, ok := e.vars.Get(name); ok {
			continue
		}
		if err := e.vars.Set(name, p.Vars[name]); err != nil {
			return e.done(sum, start, fmt.Errorf("plan var %s: %w", name, err))
		}
	}
	pe := &event.Plan{Name: p.Name, DryRun: e.cfg.DryRun}
	for _, ph := range p.Phases {
		pe.Phases = append(pe.Phases, PhaseInfo(ph, len(ph.Steps)))
	}
	e.emit(event.Event{Kind: event.KindPlan, Plan: pe})
	e.filesAhead(p)
	saved := map[string]bool{} // the variables the steps before set
	for i, ph := range p.Phases {
		e.phase = ph.Phase
		info := PhaseInfo(ph, len(ph.Steps))
		e.emit(event.Event{Kind: event.KindPhase, Phase: &info})
		for j := 0; j < len(ph.Steps); {
			sctx := ctx
			lastPhase := i == len(p.Phases)-1
			if lastPhase && j == len(ph.Steps)-1 {
				sctx = transport.WithLastStep(ctx) // no shell need wait for a next command
			}
			// Static steps from here run as a batch (batch.go); each
			// result as RunStep's.
			var results []StepResult
			var err error
			if n := e.staticSteps(ph.Steps[j:], saved); n > 1 {
				results, err = e.runBatch(ctx, ph.Steps[j:j+n], lastPhase && j+n == len(ph.Steps))
			} else {
				var res StepResult
				res, err = e.RunStep(sctx, ph.Steps[j])
				results = []StepResult{res}
			}
			for k, res := range results {
				st := ph.Steps[j+k]
				if st.SaveOutputAs != "" {
					saved[st.SaveOutputAs] = true
				}
				sum.Count(res.Status)
				if err != nil && k == len(results)-1 {
					return e.done(sum, start, err)
				}
				if res.Status == execctx.StatusError && st.IgnoreErrors {
					sum.Ignored++
					continue
				}
				if res.Status == execctx.StatusError || res.Status == execctx.StatusDenied {
					r := res
					sum.Failed = &r
					return e.done(sum, start, nil)
				}
			}
			if err != nil { // nothing of the batch ended
				return e.done(sum, start, err)
			}
			j += len(results)
		}
	}
	sum.Success = true
	return e.done(sum, start, nil)
}

// PhaseInfo describes ph for events, with its number of steps (0 for the
// model's phases, whose steps are still to come).
func PhaseInfo(ph planner.Phase, steps int) event.PhaseInfo {
	return event.PhaseInfo{Phase: ph.Phase, Goal: ph.Goal, Description: ph.Description, SuccessCriteria: ph.SuccessCriteria, Steps: steps}
}

func (e *Executor) done(sum Summary, start time.Time, err error) (Summary, error) {
	sum.Err = err
	sum.Duration = time.Since(start)
	if err != nil {
		sum.Success = false
	}
	e.emit(sum.Event(sum.Text()))
	return sum, err
}
