package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/autoshell/agent/safety"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// batchPrompter asks a person once per distinct resolved step in a batch
// run: the answer (yes or no) applies to every host where the same step
// (tool, resolved parameters, command and path; safety.StepKey) comes up.
// The Approver asks one question at a time, so a second host with the same
// step finds the first host's answer here.
type batchPrompter struct {
	next safety.Prompter
	out  *batchOutput

	mu      sync.Mutex
	answers map[string]safety.Decision
}

func (p *batchPrompter) Approve(ctx context.Context, req safety.Request) (safety.Decision, error) {
	key, keyed := safety.StepKey(req)
	p.mu.Lock()
	d, ok := p.answers[key]
	p.mu.Unlock()
	if keyed && ok {
		if d.Allowed {
			d.Reason = "approved by user for all hosts"
		} else {
			d.Reason = "denied by user for all hosts"
		}
		return d, nil
	}
	var err error
	p.out.pause(func() {
		if lp, ok := p.next.(*safety.LinePrompter); ok {
			io.WriteString(lp.Out, "\nBatch run: your answer applies to every host where this exact step comes up.\n")
		}
		d, err = p.next.Approve(ctx, req)
	})
	if err != nil {
		return d, err
	}
	if keyed {
		d.Always = d.Allowed
		p.mu.Lock()
		if p.answers == nil {
			p.answers = map[string]safety.Decision{}
		}
		p.answers[key] = d
		p.mu.Unlock()
	}
	return d, nil
}

// lockedPrompter asks host-key and passphrase questions of the connections
// of a batch one at a time, with the progress bar out of the way.
type lockedPrompter struct {
	next sshtr.Prompter
	out  *batchOutput
	mu   sync.Mutex
}

func (p *lockedPrompter) Confirm(ctx context.Context, question string) (ok bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.pause(func() { ok, err = p.next.Confirm(ctx, question) })
	return ok, err
}

func (p *lockedPrompter) Passphrase(ctx context.Context, prompt string) (b []byte, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.pause(func() { b, err = p.next.Passphrase(ctx, prompt) })
	if err != nil {
		return nil, fmt.Errorf("passphrase: %w", err)
	}
	return b, nil
}
