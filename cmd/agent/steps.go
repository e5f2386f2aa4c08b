package main

import (
	"context"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// stepFlags are the flags every command that runs steps shares.
type stepFlags struct {
	approve      string
	json, dryRun bool
}

// stepRun is what `agent run` and `agent -c` need to run steps on the
// selected host: the transport, the session with its audit log and undo
// journal, the approver and the renderer, wired into an ExecutorConfig.
type stepRun struct {
	tr      transport.Transport
	host    string
	session string
	render  renderer
	exec    planner.ExecutorConfig
	closers []func()
}

// Close releases everything openSteps opened, last first.
func (s *stepRun) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// openSteps resolves the approval mode (asking on /dev/tty only when a
// person may be asked), connects to the host, and opens a new session's
// audit log and undo journal. The caller must Close the result.
func (a *app) openSteps(ctx context.Context, policy safety.Policy, f stepFlags) (_ *stepRun, err error) {
	mode, prompter, closeTTY, err := resolveApproval(f.approve)
	if err != nil {
		return nil, err
	}
	tr, err := a.open(ctx)
	if err != nil {
		closeTTY()
		return nil, err
	}
	s, err := openStepsOn(stepTarget{
		tr: tr, approver: safety.NewApprover(mode, prompter), render: newRenderer(a, f.json),
		progress: progressFunc(a.stderr, f.json),
	}, policy, f.dryRun)
	if err != nil {
		closeTTY()
		return nil, err
	}
	s.closers = append([]func(){closeTTY}, s.closers...)
	return s, nil
}

// resolveApproval reads --approve: the mode, and the prompter that asks
// on /dev/tty when a person may be asked (nil otherwise), with a func that
// closes the terminal. Without --approve the mode is ask on a terminal and
// never without one.
func resolveApproval(approve string) (mode safety.Mode, prompter safety.Prompter, closeTTY func(), err error) {
	closeTTY = func() {}
	if approve != "" {
		if mode, err = safety.ParseMode(approve); err != nil {
			return 0, nil, closeTTY, usagef("--approve: %v", err)
		}
	}
	if mode != safety.ModeNever || approve == "" {
		if p, c := newApprovalPrompter(); p != nil {
			prompter, closeTTY = p, c
		}
	}
	if approve == "" {
		mode = safety.DefaultMode(prompter != nil)
	}
	return mode, prompter, closeTTY, nil
}

// stepTarget is one host to run steps on, for openStepsOn.
type stepTarget struct {
	// tr is the connection; the stepRun closes it.
	tr transport.Transport
	// host names the host in events, the audit log and the undo journal;
	// default tr.Host().Name.
	host string
	// session is the session id; default a new one. The hosts of a batch
	// share one.
	session  string
	approver *safety.Approver
	render   renderer
	// audit is a shared audit log; nil opens the default one (closed by
	// the stepRun).
	audit *safety.Audit
	// progress draws transfer progress; nil draws nothing.
	progress tools.ProgressFunc
}

// openStepsOn opens the session's undo journal (and the audit log unless
// t has one) for steps on t.tr. The stepRun owns t.tr; on error it is
// closed.
func openStepsOn(t stepTarget, policy safety.Policy, dryRun bool) (_ *stepRun, err error) {
	s := &stepRun{tr: t.tr, host: t.host, session: t.session, render: t.render}
	s.closers = append(s.closers, func() { t.tr.Close() })
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.host == "" {
		s.host = t.tr.Host().Name
	}
	if s.session == "" {
		s.session = safety.NewSessionID()
	}
	stateDir, err := safety.StateDir()
	if err != nil {
		return nil, err
	}
	audit := t.audit
	if audit == nil {
		auditPath, err := safety.AuditPath()
		if err != nil {
			return nil, err
		}
		if audit, err = safety.OpenAudit(auditPath); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { audit.Close() })
	}
	journal, err := safety.OpenJournal(stateDir, s.session, s.host)
	if err != nil {
		return nil, err
	}
	journal.MaxBytes = policy.MaxWriteBytes

	s.exec = planner.ExecutorConfig{
		Transport: s.tr, Policy: policy, Approver: t.approver,
		Audit: audit, Journal: journal, Session: s.session, Host: s.host,
		Emit: s.render.event, DryRun: dryRun,
	}
	if t.progress != nil {
		s.exec.ToolOptions = append(s.exec.ToolOptions, tools.WithProgress(t.progress))
	}
	return s, nil
}
