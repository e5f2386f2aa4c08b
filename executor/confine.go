package executor

import (
	"context"
	"fmt"
	"slices"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// confineLevel is how far the commands of a step of tool at risk l,
// allowed by d under approval mode m, may reach: a person's approval
// leaves them unconfined, and so does --approve all, which approves every
// level (a step it lets run confined could be rephrased into a high one it
// lets run unconfined: holding it would only refuse what the operator
// allowed); else a safe step is read-only and a medium one allowed by
// policy may write all but the protected hierarchies. The container tools
// are not confined: their command line is agent's own, and podman
// (rootful and rootless) mounts its storage on every call, which Landlock
// forbids any confined process (EPERM); the same podman typed into
// execute_command stays confined. The operator's --sandbox confines every
// command whatever this says.
func confineLevel(tool string, l safety.Level, d safety.Decision, m safety.Mode) confine.Level {
	if d.By == safety.ByUser || m >= safety.ModeAll || tools.IsContainerTool(tool) {
		return confine.None
	}
	switch l {
	case safety.Safe:
		return confine.ReadOnly
	case safety.Medium:
		return confine.NoProtected
	}
	return confine.None
}

// confined returns the transport the step's tool runs through: the host's,
// or one whose commands run under the Confiner's launcher.
func (e *Executor) confined(ctx context.Context, tr transport.Transport, l confine.Level) (transport.Transport, error) {
	cf := e.confinerFor(tr)
	if cf == nil {
		return unconfined(tr, l), nil
	}
	// Even confine.None: the operator's sandbox confines every command.
	c, err := cf.Confine(ctx, l)
	if err != nil {
		return tr, err
	}
	if c.None() {
		return unconfined(tr, l), nil
	}
	if tr != e.cfg.Transport {
		// Another user's transport (become: sudo → launcher → shell): a
		// confined thread would stop sudo itself (no_new_privs).
		c.Thread = nil
	}
	return wrapped{Transport: tr, c: c}, nil
}

// unconfined is the transport a step of level l runs through where the
// kernel does not confine it. A step nobody approved (l is not None) on
// an SSH host still loses the host's secret-named variables, as a
// confined one does in the launcher: its commands run after
// confine.SecretEnvPrologue in the same shell. Locally every step already
// starts from an allow-list of agent's environment (transport.StepEnv).
func unconfined(tr transport.Transport, l confine.Level) transport.Transport {
	if l == confine.None || tr.Host().Kind == "local" {
		return tr
	}
	return prologued{Transport: tr, prologue: secretEnvPrologue}
}

var secretEnvPrologue = confine.SecretEnvPrologue()

// prologued runs every command after prologue, in the same shell.
type prologued struct {
	transport.Transport
	prologue string
}

func (p prologued) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	c.Command = p.prologue + c.Command
	return p.Transport.Run(ctx, c)
}

// Unwrap returns the host's transport (transport.Unwrapper).
func (p prologued) Unwrap() transport.Transport { return p.Transport }

// wrapped runs every command confined: started on a confined thread when
// the confinement has one and the command has no wrapper of its own, else
// under the launcher (after any wrapper the command already has, such as
// sudo: sudo → launcher → shell).
type wrapped struct {
	transport.Transport
	c confine.Confinement
}

func (w wrapped) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	if b, i := transport.BatchOf(ctx); b != nil && w.c.Thread != nil && len(c.Wrap) == 0 {
		// A batch's command on a confined thread (a local batch): it
		// runs in turn, as soon as the one before it succeeded —
		// prepared now, while the ones before it run.
		run := w.Transport.Run
		if p, ok := w.Transport.(transport.Preparer); ok {
			prun := p.Prepare(c)
			run = func(ctx context.Context, _ transport.Command) (transport.Result, error) { return prun(ctx) }
		}
		return b.InTurn(ctx, i, func(ctx context.Context) (transport.Result, error) {
			return w.onThread(transport.WithoutBatch(ctx), c, run)
		})
	}
	if w.c.Thread != nil && len(c.Wrap) == 0 {
		return w.onThread(ctx, c, w.Transport.Run)
	}
	dw, _ := ctx.Value(durableKey{}).(*durableWait)
	if dw != nil {
		if err := dw.wait(); err != nil {
			dw.err = err
			return transport.Result{}, fmt.Errorf("not run: %w", err)
		}
	}
	if w.c.Wrap == nil {
		return transport.Result{}, fmt.Errorf("confine: no launcher to run %q under its wrapper %q", c.Command, c.Wrap[0])
	}
	// The launcher alone (no sudo before it) may be started ahead of the
	// command: it confines the same whatever the command.
	c.Ahead = len(c.Wrap) == 0
	c.Wrap = append(slices.Clone(c.Wrap), w.c.Wrap...)
	return w.Transport.Run(ctx, c)
}

// onThread runs c with run on the step's confined thread.
func (w wrapped) onThread(ctx context.Context, c transport.Command, run func(context.Context, transport.Command) (transport.Result, error)) (transport.Result, error) {
	dw, _ := ctx.Value(durableKey{}).(*durableWait)
	// What must be on disk before the command starts (the step's
	// audit lines and start record, Executor.run) is waited for here,
	// unconfined, while the thread is confined; the thread only
	// receives the outcome.
	ready := make(chan error, 1)
	if dw != nil {
		go func() { ready <- dw.wait() }()
	} else {
		ready <- nil
	}
	var res transport.Result
	var err error
	received := false
	// The thread may run the next command of its rules only once
	// nothing of this one is left to signal it: its process group
	// is gone (confine.Restrictor.Reuse).
	pgid := 0
	rctx := transport.WithStarted(ctx, func(g int) {
		pgid = g
		transport.Started(ctx, g)
	})
	if terr := w.c.Thread.DoThen(func() bool {
		derr := <-ready
		received = true
		if derr != nil {
			dw.err, err = derr, fmt.Errorf("not run: %w", derr)
			return true
		}
		res, err = run(rctx, c)
		return confine.GroupGone(pgid)
	}); terr != nil {
		if !received {
			<-ready // nothing ran: the wait is not left behind
		}
		return transport.Result{}, fmt.Errorf("confine: not confined, not run: %w", terr)
	}
	return res, err
}

// Unwrap returns the host's transport (transport.Unwrapper): its
// capabilities (RealPath, HomeDir, ReadDir, become) are agent's own work,
// never confined.
func (w wrapped) Unwrap() transport.Transport { return w.Transport }

// sandbox is the stage that blocks a file tool step whose file lies
// outside what the operator's sandbox allows (the file tools run in
// agent's process, not under the kernel's rules, so they check the same
// rules here): the file as it really is on the host, links resolved (as
// the step's view found it). Commands are held by the kernel instead.
func (e *Executor) sandbox(ctx context.Context, s *stepRun) *denial {
	cls := s.p.cls
	files := remote(cls.files)
	cf := e.confinerFor(s.p.tr)
	if cf == nil || !cf.Sandboxed() || cls.path == "" || len(files) == 0 {
		return nil
	}
	// The sandbox's rules as the host computed them (set up on first use).
	if _, err := cf.Confine(ctx, confine.None); err != nil {
		return broken(err)
	}
	write := false
	for _, f := range files {
		write = write || f.Op != safety.FileRead
	}
	real, err := s.p.view.real(ctx, cls.path)
	if err != nil {
		return broken(err)
	}
	if why := cf.FileBlocked(write, real); why != "" {
		return &denial{kind: blockedBySandbox, reason: why}
	}
	return nil
}
