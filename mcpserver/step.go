package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
)

// stepResult is the structured content of a step tool's result.
type stepResult struct {
	Host     string `json:"host"`
	Tool     string `json:"tool"`
	Status   string `json:"status"` // ok, error, skipped, denied
	ExitCode *int   `json:"exit_code,omitempty"`
	Risk     string `json:"risk"`
	Reason   string `json:"reason,omitempty"` // the approval decision's
	Command  string `json:"command,omitempty"`
	Path     string `json:"path,omitempty"`
	Session  string `json:"session"` // what undo restores
	Output   string `json:"output"`
}

// stepHandler runs the step tool name: the arguments checked, the host
// leased, the step run by the host's executor (classification, approval,
// journal, audit), the observation (secrets scrubbed) returned. A refused
// or failed step is a result with isError, never a protocol error.
func (s *Server) stepHandler(name string) mcp.ToolHandler {
	t, _ := s.reg.Lookup(name)
	schema := t.Schema()
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		host, params, err := stepArgs(req.Params.Arguments, s.o.MaxArgBytes, schema)
		if err != nil {
			return toolError("%s: %v", name, err), nil
		}
		ctx, end := s.begin(ctx, req)
		defer end()
		c := s.clients.of(req.Session)
		s.hosts.label(c.scope, principal(req))
		l, err := s.hosts.acquire(ctx, poolKey(c.scope, host))
		if err != nil {
			return toolError("%s: %v", name, err), nil
		}
		defer l.release()
		l.approveBy(c)
		stop, sink := s.progress(ctx, req, fmt.Sprintf("%s on %s", name, host))
		l.output(sink)
		r, err := l.exec.RunStep(withCaller(ctx, req.Session), planner.Step{Tool: name, Parameters: params})
		l.output(nil)
		stop()
		h := l.Host()
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return toolError("%s on %s: cancelled: %s", name, host, h.Redact(err.Error())), nil
			}
			return toolError("%s on %s: %s", name, host, h.Redact(err.Error())), nil
		}
		out := stepResult{Host: host, Tool: name, Status: string(r.Status), Risk: r.Risk.Level.String(),
			Reason: h.Redact(r.Decision.Reason), Command: h.Redact(r.Command), Path: r.Path,
			Session: h.Session, Output: h.Redact(r.Observation)}
		if r.Command != "" && r.Status != execctx.StatusDenied {
			code := r.Output.ExitCode
			out.ExitCode = &code
		}
		return textResult(out.Output, r.Status != execctx.StatusOK && r.Status != execctx.StatusSkipped, out), nil
	}
}

// progressTail is how much of a running command's latest output a
// progress notification carries.
const progressTail = 512

// progress sends the client progress notifications while a call runs,
// when it asked for them (a progress token): every Options.Progress, the
// time it has run and the tail of the output printed since the last one
// (secrets scrubbed: it comes through the host's sink). It returns the
// func that stops them and the func that takes the output (nil when no
// notifications are wanted).
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, what string) (stop func(), out func(string)) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}, nil
	}
	var mu sync.Mutex
	var tail []byte
	out = func(data string) {
		mu.Lock()
		defer mu.Unlock()
		tail = append(tail, data...)
		if len(tail) > 2*progressTail {
			tail = append(tail[:0], tail[len(tail)-progressTail:]...)
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		start := time.Now()
		tick := time.NewTicker(s.o.Progress)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				el := now.Sub(start).Round(time.Second)
				msg := fmt.Sprintf("%s: running for %s", what, el)
				mu.Lock()
				if len(tail) > 0 {
					t := tail[max(0, len(tail)-progressTail):]
					msg += "; output: " + strings.ToValidUTF8(string(t), "")
					tail = tail[:0]
				}
				mu.Unlock()
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: el.Seconds(), Message: msg})
			}
		}
	}()
	return func() { close(done); <-stopped }, out
}

// target resolves a host parameter: an inventory host when the server
// has an inventory and the name is one of its selected hosts, else an SSH
// destination (alias, user@host[:port]) resolved like ssh -G.
func (s *Server) target(name string) (engine.Target, error) {
	if len(s.o.Inventory.Sources) > 0 {
		all, err := engine.InventoryHosts(s.o.Inventory, "", s.o.SSH)
		if err != nil {
			return engine.Target{}, err
		}
		sel, err := engine.InventoryHosts(s.o.Inventory, s.o.Limit, s.o.SSH)
		if err != nil {
			return engine.Target{}, err
		}
		for _, t := range sel {
			if t.Name == name {
				if _, ok := engine.Connection(t.Connection); !ok {
					return engine.Target{}, fmt.Errorf("inventory host %s has ansible_connection=%s: agent reaches hosts over ssh or local only", name, t.Connection)
				}
				return t, nil
			}
		}
		for _, t := range all {
			if t.Name == name {
				return engine.Target{}, fmt.Errorf("inventory host %s is not selected by the server's --limit %q", name, s.o.Limit)
			}
		}
	}
	return engine.HostTarget(sshDest(name), s.o.SSH)
}
