package engine

import (
	"context"
	"path/filepath"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/launchers"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/semsearch"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/become"
	"github.com/autoshell/agent/transport/local"
)

// HostOptions say how to run steps on a host.
type HostOptions struct {
	// Policy classifies risk (safety.DefaultPolicy() or the config file's).
	Policy safety.Policy
	// Approver decides on medium and high steps; nil denies them all.
	Approver *safety.Approver
	// Session is the session id; "" starts a new one. The hosts of a batch
	// share one.
	Session string
	// Audit is a shared audit log; nil opens the default one (closed with
	// the Host).
	Audit *audit.Log
	// Emit receives the host's events, host set and secrets scrubbed
	// (Secrets); nil: none.
	Emit event.Sink
	// Secrets are values never to show in events (besides the patterns
	// redact.String knows): the host's secret-named variables. They are
	// added to Redact as Known.
	Secrets []string
	// Redact is the session's secret set, shared by its hosts and its
	// model requests, transcript and audit lines; nil: a new one for the
	// host.
	Redact *redact.Set
	// DryRun runs safe steps only; medium and high ones are previewed.
	DryRun bool
	// Vars is the execution context before any step (--var, the inventory
	// host's variables); nil: a new one.
	Vars *execctx.Context
	// Progress draws transfer progress; nil draws nothing.
	Progress tools.ProgressFunc
	// Become is the host's become settings (ResolveBecome); nil: no step
	// may run as another user. Its password is scrubbed like Secrets.
	Become *HostBecome
	// Record, when set, receives the session's record (session.go): the
	// host's steps, the variables they set, the model's usage. The
	// caller closes it.
	Record *session.Log
	// RecordNeeds: each step reports what it needed of declared
	// permissions (--save-plan writes them).
	RecordNeeds bool
	// Search is how semantic_search ranks (see SearchOptions).
	Search SearchOptions
	// Enforcement says how the kernel holds the host's unapproved steps.
	Enforcement Enforcement
}

// SearchOptions give semantic_search its embeddings model: nil ranks by
// BM25, NoEmbedder saying why in each result (tools.NoEmbedderReason when
// empty). Its index cache is under the state directory (search/).
type SearchOptions struct {
	Embedder   semsearch.Embedder
	NoEmbedder string
}

// Enforcement configures the kernel confinement of unapproved steps
// (package confine). The zero value enforces where the host can, with the
// launchers this build carries, and says once where it cannot.
type Enforcement struct {
	// Off runs unapproved steps with the classifier alone (tests compare
	// the two).
	Off bool
	// Require refuses unapproved steps on a host that cannot enforce
	// (--require-enforcement; also the policy's require_enforcement).
	Require bool
	// Ephemeral sends the launcher and computes the levels' rules for each
	// session on SSH hosts and removes them at its end (--ephemeral; also
	// the policy's ephemeral_launcher); by default they are kept between
	// sessions in agent's state directory there.
	Ephemeral bool
	// Launcher finds the launcher for an SSH host's architecture; nil:
	// launchers.Find.
	Launcher confine.LauncherFunc
	// Exe is the local launcher (agent itself, run with
	// confine.LaunchArg); "": the running executable.
	Exe string
	// Probe replaces asking the kernel for its Landlock ABI (tests
	// simulate a kernel without).
	Probe func(ctx context.Context) (abi int, release string, err error)
}

// Host is a host opened for steps: its connection, the session's undo
// journal and audit log, the approver and the event sink, wired into an
// executor. The executor (and so the variables) lives as long as the
// Host: a later task sees what earlier ones found.
type Host struct {
	Name    string
	Session string
	tr      transport.Transport
	exec    *executor.Executor
	redact  Redactor
	sink    event.Sink // the front end's, through the redactor (and the record)
	out     event.Sink // the front end's, through the redactor
	cfg     executor.Config
	rec     *session.Log
	closers []func()

	// recordedAhead are the steps whose start record a batch wrote
	// before their step_start event (executor.Config.Ahead).
	recordedAhead []int

	become    *become.Transport // the host as the become user; nil: none
	becomeAll bool
	hb        *HostBecome
}

// Open dials t and opens it for steps. The caller must Close the Host.
func Open(ctx context.Context, t Target, d DialOptions, o HostOptions) (*Host, error) {
	tr, err := Dial(ctx, t, d)
	if err != nil {
		return nil, err
	}
	h, err := OpenOn(tr, t.name(tr), o)
	if err != nil {
		return nil, err
	}
	if err := h.checkBecome(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// OpenOn opens the session's undo journal (and the audit log unless o has
// one) for steps on tr, named name ("" for the transport's own name). The
// Host owns tr; on error it is closed.
func OpenOn(tr transport.Transport, name string, o HostOptions) (_ *Host, err error) {
	set := o.Redact
	if set == nil {
		set = redact.NewSet()
	}
	addSecrets(set, o.Secrets, o.Become)
	h := &Host{tr: tr, Name: name, Session: o.Session, redact: Redactor{Set: set}, rec: o.Record}
	sc := &streamScrub{r: h.redact}
	h.sink = sc.sink(o.Emit)
	h.out = h.sink
	if h.rec != nil {
		h.sink = h.recorded(sc, o.Emit)
	}
	h.closers = append(h.closers, func() { tr.Close() })
	if lt, ok := tr.(*local.Transport); ok {
		lt.PassEnv(o.Policy.PassEnv)
	}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	if h.Name == "" {
		h.Name = tr.Host().Name
	}
	if h.Session == "" {
		h.Session = statedir.NewSessionID()
	}
	stateDir, err := statedir.Dir()
	if err != nil {
		return nil, err
	}
	log := o.Audit
	if log == nil {
		auditPath, err := statedir.AuditPath()
		if err != nil {
			return nil, err
		}
		if log, err = audit.Open(auditPath); err != nil {
			return nil, err
		}
		h.closers = append(h.closers, func() { log.Close() })
	}
	j, err := journal.Open(stateDir, h.Session, h.Name)
	if err != nil {
		return nil, err
	}
	j.MaxBytes = o.Policy.MaxWriteBytes
	var lj *journal.Journal // the operator's files a download writes
	if tr.Host().Kind != "local" {
		if lj, err = journal.Open(stateDir, h.Session, "local"); err != nil {
			return nil, err
		}
		lj.MaxBytes = o.Policy.MaxWriteBytes
	}
	cfg := executor.Config{
		LocalJournal: lj,
		Transport:    tr, Policy: o.Policy, Approver: o.Approver,
		Audit: log, Redact: h.redact.String, Secrets: set, Journal: j, Session: h.Session, Host: h.Name,
		Emit: h.sink, DryRun: o.DryRun, Vars: o.Vars,
		Permissions: AllowWrite(o.Policy), ReadOnly: o.Policy.OnlySafe, RecordNeeds: o.RecordNeeds,
	}
	if h.rec != nil {
		// Not synced: a SIGKILL loses no write, and a machine that
		// crashed has no process left to reap.
		cfg.Started = func(pgid int) {
			h.rec.Write(session.Record{R: session.RecProc, Host: h.Name, PGID: pgid}, false)
		}
		// The step's start record (written behind, session.go) is on
		// disk before its command starts.
		cfg.Durable = func() error { h.rec.Wait(); return nil }
		// A batch's later steps' start records before its commands are
		// sent (executor/batch.go); their events, later, are not
		// recorded again.
		cfg.Ahead = func(ev event.Event) {
			ev = h.redact.Event(ev)
			h.record(ev)
			h.recordedAhead = append(h.recordedAhead, ev.StepStart.Step)
		}
	}
	if o.Progress != nil {
		cfg.ToolOptions = append(cfg.ToolOptions, tools.WithProgress(o.Progress))
	}
	cfg.ToolOptions = append(cfg.ToolOptions, tools.WithEmbedder(o.Search.Embedder, o.Search.NoEmbedder),
		tools.WithSearchCache(filepath.Join(stateDir, "search")))
	if o.Vars != nil {
		markSecretVars(o.Vars, nil) // --var db_password=…: kept from the model as in a batch
	}
	if o.Become != nil {
		if h.become, err = become.New(tr, o.Become.Config); err != nil {
			return nil, ConfigError{err}
		}
		h.becomeAll, h.hb = o.Become.All, o.Become
		cfg.Become, cfg.BecomeAll = h.become, h.becomeAll
	}
	if c := h.confiner(tr, o, func(ctx context.Context) (string, error) { return h.exec.HomeDir(ctx) }, ""); c != nil {
		cfg.Confiner = c
	}
	if h.become != nil && h.become.User() != "root" && h.become.User() != "#0" {
		// A non-root become user cannot reach the login user's private
		// launcher directory (nor, locally, agent's rules directory): its
		// steps get a launcher and rules of its own, kept in its state
		// directory, set up through become — locally too.
		if c := h.confiner(h.become, o, h.become.HomeDir, h.become.User()); c != nil {
			cfg.BecomeConfiner = c
		}
	}
	h.cfg = cfg
	h.exec = executor.New(cfg)
	return h, nil
}

// Worker returns another executor on the host: its connection, session,
// undo journal, audit log and approver, with vars as its execution context
// (nil: a new one) and its events going to emit (nil: the host's sink),
// secrets scrubbed. An Executor is not safe for concurrent use; a front
// end that runs steps on one host concurrently (the MCP server) takes a
// worker per concurrent step. Workers live as long as the Host.
func (h *Host) Worker(vars *execctx.Context, emit event.Sink) *executor.Executor {
	cfg := h.cfg
	cfg.Vars = vars
	switch {
	case emit != nil && h.rec != nil:
		// The worker's steps go to the session record too (agent mcp).
		cfg.Emit = h.recorded(&streamScrub{r: h.redact}, emit)
	case emit != nil:
		cfg.Emit = h.scrub(emit)
	}
	return executor.New(cfg)
}

// confiner returns the kernel confinement of the host's unapproved steps,
// nil when off. Its clean-up (the launcher sent to an SSH host) runs
// before the connection closes.
//
// For a become user (as: its name) tr is the become transport and home
// its home: the launcher and the rules are that user's own.
func (h *Host) confiner(tr transport.Transport, o HostOptions, home func(context.Context) (string, error), as string) *confiner {
	e := o.Enforcement
	if e.Off && !o.Policy.Sandbox.On() {
		return nil
	}
	if e.Launcher == nil {
		e.Launcher = launchers.Find
	}
	c := newConfiner(tr, confinerOptions{
		Policy: o.Policy, Require: e.Require || o.Policy.RequireEnforcement,
		Home: home,
		Warn: func(msg string) {
			if as != "" {
				msg = "as " + as + ": " + msg
			}
			h.warn(msg)
		},
		Launcher: e.Launcher, Exe: e.Exe, Probe: e.Probe, LevelsOff: e.Off,
		Keep: !e.Ephemeral && !o.Policy.EphemeralLauncher, Launched: as != "",
	})
	h.closers = append(h.closers, func() {
		if err := c.Close(); err != nil {
			h.warn(err.Error())
		}
	})
	return c
}

// recorded returns the sink that passes events through sc, secrets
// replaced, to the session record and then to emit.
func (h *Host) recorded(sc *streamScrub, emit event.Sink) event.Sink {
	return func(ev event.Event) {
		sc.pass(ev, func(ev event.Event) {
			h.record(ev)
			emit.Emit(ev)
		})
	}
}

// scrub returns the sink that passes events to emit with their secrets
// replaced, output events by stream (stream.go).
func (h *Host) scrub(emit event.Sink) event.Sink {
	return (&streamScrub{r: h.redact}).sink(emit)
}

// Approver decides on the host's medium and high steps.
func (h *Host) Approver() *safety.Approver { return h.exec.Approver() }

// Executor runs the host's steps.
func (h *Host) Executor() *executor.Executor { return h.exec }

// Transport is the host's connection.
func (h *Host) Transport() transport.Transport { return h.tr }

// Become is the host's become settings (nil: none), for undo.
func (h *Host) Become() *HostBecome { return h.hb }

// StepTransport is what the host's steps run on by default: the host as
// the become user when every step becomes (the model's description of
// the target is then that user's), else the connection.
func (h *Host) StepTransport() transport.Transport {
	if h.become != nil && h.becomeAll {
		return h.become
	}
	return h.tr
}

// Vars is the host's execution context.
func (h *Host) Vars() *execctx.Context { return h.exec.Vars() }

// Redact returns s with the host's secrets replaced.
func (h *Host) Redact(s string) string { return h.redact.String(s) }

// Secrets is the session's secret set the host redacts with.
func (h *Host) Secrets() *redact.Set { return h.redact.Set }

// RunPlan runs p on the host (executor.RunPlan).
func (h *Host) RunPlan(ctx context.Context, p *planner.Plan) (executor.Summary, error) {
	return h.exec.RunPlan(ctx, p)
}

// Close releases everything Open opened, last first.
func (h *Host) Close() {
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	h.closers = nil
}
