package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/autoshell/agent/safety"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// batchPrompter asks a person once per distinct resolved step in a batch
// run: the answer (yes or no) applies to every host where the same step
// comes up — same tool, resolved parameters, command, path and previewed
// change (safety.StepKey), and for a step whose meaning depends on the
// login (a command, which runs in the user's home; a file tool's relative
// or ~ path) the same remote user. The Approver asks one question at a
// time, so a second host with the same step finds the first host's answer
// here. Answers are kept here, never as the Approver's "always", whose key
// knows no user.
type batchPrompter struct {
	next  safety.Prompter
	out   *batchOutput
	users map[string]string // inventory host → its SSH user

	mu      sync.Mutex
	answers map[string]safety.Decision
}

// key is req's key among the batch's answers.
func (p *batchPrompter) key(req safety.Request) (string, bool) {
	key, ok := safety.StepKey(req)
	if ok && dependsOnLogin(req) {
		key += "\x00user=" + p.users[req.Host]
	}
	return key, ok
}

// dependsOnLogin reports whether what req does depends on the remote
// user and home: a command without an absolute cwd (relative paths, ~ and
// $HOME are the login's), a file tool's path that is relative or starts
// with ~.
func dependsOnLogin(req safety.Request) bool {
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

func (p *batchPrompter) Approve(ctx context.Context, req safety.Request) (safety.Decision, error) {
	key, keyed := p.key(req)
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
	d.Always = false
	if keyed {
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
