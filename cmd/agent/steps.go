package main

import (
	"context"
	"fmt"
	"os"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
)

// stepFlags are the flags every command that runs steps shares.
type stepFlags struct {
	approve      string
	json, dryRun bool
	// start, when set, describes the session to record (session.go).
	start *session.Start
	// recordNeeds (--save-plan): the steps report what they needed, for
	// the saved plan's permissions.
	recordNeeds bool
	// search is semantic_search's embeddings model (searchOptions).
	search engine.SearchOptions
}

// hostRun is what `agent run`, `agent -c` and the REPL need to run steps
// on the selected host: the engine's Host, rendered.
type hostRun struct {
	*engine.Host
	render  renderer
	rec     *session.Log // nil: not recorded
	closers []func()
}

// Close releases the host and the terminal, last opened first.
func (s *hostRun) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// openHost resolves the approval mode (asking on /dev/tty only when a
// person may be asked; prompter, when not nil, asks instead), connects to
// the host and opens a new session on it. The caller must Close the result.
func (a *app) openHost(ctx context.Context, policy safety.Policy, f stepFlags, vars []string, opts ...safety.ApproverOption) (_ *hostRun, err error) {
	mode, prompter, closeTTY, err := resolveApproval(f.approve)
	if err != nil {
		return nil, err
	}
	s := &hostRun{render: newRenderer(a, f.json), closers: []func(){closeTTY}}
	// The spinner (and a running command's live output) only when stdout
	// and stderr are both the terminal: with stdout redirected (agent -c …
	// > log) its redraws would interleave with nothing on screen and
	// garble what the terminal shows. It stops while a person is asked.
	if r, ok := s.render.(*termRenderer); ok {
		if f, ok := a.stdout.(*os.File); ok && isTerminal(f) {
			r.spin = newSpinner(a.stderr) // nil unless stderr is a terminal
		}
		if r.spin != nil && prompter != nil {
			prompter = quietPrompter{next: prompter, spin: r.spin}
		}
	}
	defer func() {
		if err != nil {
			if s.rec != nil {
				s.rec.End(session.StateFailed)
			}
			s.Close()
		}
	}()
	t, err := a.target()
	if err != nil {
		return nil, err
	}
	ctxVars, err := engine.ParseVars(vars)
	if err != nil {
		return nil, err
	}
	bec, err := a.becomeSettings(ctx)
	if err != nil {
		return nil, err
	}
	hb, err := engine.ResolveBecome(t, bec)
	if err != nil {
		return nil, err
	}
	if f.start != nil {
		st := *f.start
		st.Target, st.DryRun = a.targetName(), f.dryRun
		if s.rec, err = a.openRecord(st); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, s.rec.Close)
	}
	h, err := engine.Open(ctx, t, a.dialOptions(), engine.HostOptions{
		Policy: policy, Approver: safety.NewApprover(mode, prompter, opts...), Emit: a.warnings(s.render.event),
		DryRun: f.dryRun, Vars: ctxVars, Progress: progressFunc(a.stderr, f.json),
		Secrets: engine.SecretValues(ctxVars.Vars()), Redact: a.secretSet(), Become: hb, Record: s.rec, Session: s.rec.ID(), RecordNeeds: f.recordNeeds,
		Search: f.search,
	})
	if err != nil {
		return nil, err
	}
	s.Host = h
	s.closers = append(s.closers, h.Close)
	return s, nil
}

// warnings passes events to next, and says the warnings for the person
// on stderr (the renderers leave them out).
func (a *app) warnings(next event.Sink) event.Sink {
	return func(ev event.Event) {
		if ev.Kind == event.KindWarning && !ev.Warning.LogOnly {
			fmt.Fprintln(a.stderr, "agent:", printable(ev.Warning.Text))
		}
		next(ev)
	}
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

// noModelSearch is why semantic_search ranks lexically in a plan run.
const noModelSearch = "plans run without a model, so no embeddings (agent -c uses llm.embedding_model)"

// searchOptions is semantic_search's embeddings model for a task with
// the model of cfg: the endpoint's embeddings API, or why not.
func searchOptions(c *llm.Client) engine.SearchOptions {
	if e, ok := c.Embedder(); ok {
		return engine.SearchOptions{Embedder: e}
	}
	return engine.SearchOptions{NoEmbedder: fmt.Sprintf("no embeddings model is configured for the %s endpoint (llm.embedding_model)", c.Config().Provider)}
}
