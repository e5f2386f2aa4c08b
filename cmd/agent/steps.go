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
	s := &stepRun{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	var prompter safety.Prompter
	var mode safety.Mode
	if f.approve != "" {
		if mode, err = safety.ParseMode(f.approve); err != nil {
			return nil, usagef("--approve: %v", err)
		}
	}
	if mode != safety.ModeNever || f.approve == "" {
		if p, closeTTY := newApprovalPrompter(); p != nil {
			s.closers = append(s.closers, closeTTY)
			prompter = p
		}
	}
	if f.approve == "" {
		mode = safety.DefaultMode(prompter != nil)
	}

	if s.tr, err = a.open(ctx); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { s.tr.Close() })
	s.host, s.session = s.tr.Host().Name, safety.NewSessionID()
	stateDir, err := safety.StateDir()
	if err != nil {
		return nil, err
	}
	auditPath, err := safety.AuditPath()
	if err != nil {
		return nil, err
	}
	audit, err := safety.OpenAudit(auditPath)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { audit.Close() })
	journal, err := safety.OpenJournal(stateDir, s.session, s.host)
	if err != nil {
		return nil, err
	}
	journal.MaxBytes = policy.MaxWriteBytes

	s.render = newRenderer(a, f.json)
	s.exec = planner.ExecutorConfig{
		Transport: s.tr, Policy: policy, Approver: safety.NewApprover(mode, prompter),
		Audit: audit, Journal: journal, Session: s.session, Host: s.host,
		Emit: s.render.event, DryRun: f.dryRun,
	}
	if progress := progressFunc(a.stderr, f.json); progress != nil {
		s.exec.ToolOptions = append(s.exec.ToolOptions, tools.WithProgress(progress))
	}
	return s, nil
}
