package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/autoshell/agent/safety"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// batchPrompter asks a person about a step of a batch run, with the
// progress bar out of the way and the other hosts' output held back. The
// Approver (safety.ScopeBatch) remembers the answer for every host where
// the same step comes up; the person is told so.
type batchPrompter struct {
	next safety.Prompter
	out  *batchOutput
}

func (p *batchPrompter) Approve(ctx context.Context, req safety.Request) (d safety.Decision, err error) {
	p.out.pause(func() {
		if lp, ok := p.next.(*safety.LinePrompter); ok {
			io.WriteString(lp.Out, "\nBatch run: your answer applies to every host where this exact step comes up.\n")
		}
		d, err = p.next.Approve(ctx, req)
	})
	return d, err
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
