package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

// Options say how the server reaches hosts and decides on risky steps.
type Options struct {
	// Policy classifies risk (safety.DefaultPolicy() or the config's).
	Policy safety.Policy
	// Approve is --approve: the levels that run unattended. Steps above
	// it are asked of the client's user by elicitation; a client that
	// cannot ask gets a refusal naming the level and reason.
	Approve safety.Mode
	// Inventory and Limit (-i, --limit) name the inventory hosts a host
	// parameter may name besides SSH destinations; no sources for none.
	Inventory engine.InventorySpec
	Limit     string
	// SSH are the -F, -l, -p, --identity overrides over ~/.ssh/config.
	SSH engine.SSHOverrides
	// Become is the server's become settings (agent mcp -b,
	// --become-user, --become-method, -K, the config's become section);
	// an inventory host's ansible_become* go over them. Only when Enabled
	// may a run_plan step say become: true — the client, a model, never
	// escalates on its own.
	Become engine.Become
	// Warn receives connection warnings and the server's notes; nil: none.
	Warn func(string)
	// IdleTimeout closes a host's connection unused this long (default
	// 5 minutes).
	IdleTimeout time.Duration
	// Forks is run_plan's default number of hosts at a time (default 10).
	Forks int
	// MaxArgBytes bounds a call's arguments (default 1 MiB): more is a
	// tool error, nothing runs.
	MaxArgBytes int
	// Progress is how often a running call reports progress to a client
	// that asked for it (default 1s).
	Progress time.Duration
	// Version is reported to clients.
	Version string
}

// Defaults.
const (
	DefaultIdleTimeout = 5 * time.Minute
	DefaultForks       = 10
	DefaultMaxArgBytes = 1 << 20
	DefaultProgress    = time.Second
)

// Server is agent's MCP server. Create it with New, serve it with
// ServeStdio or Handler, and Close it.
type Server struct {
	o       Options
	mcp     *mcp.Server
	reg     *tools.Registry // the step tools, for their names and schemas
	hosts   *pool
	approve *safety.Approver // the hosts' fallback: never asks
	clients clients          // each session's approver
	calls   posts            // the HTTP POSTs carrying calls
	running running          // the calls in progress
	secrets *redact.Set      // the server's secret set, shared by its hosts
	// stopReap ends the reaping of dead servers' commands (reap.go);
	// reaped is closed when it is over.
	stopReap context.CancelFunc
	reaped   chan struct{}
}

// New builds the server and its tools. An inventory that does not load is
// a ConfigError.
func New(o Options) (*Server, error) {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Forks <= 0 {
		o.Forks = DefaultForks
	}
	if o.MaxArgBytes <= 0 {
		o.MaxArgBytes = DefaultMaxArgBytes
	}
	if o.Progress <= 0 {
		o.Progress = DefaultProgress
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if len(o.Inventory.Sources) > 0 {
		// A bad inventory or --limit stops the server before it serves.
		hosts, err := engine.InventoryHosts(o.Inventory, o.Limit, o.SSH)
		if err != nil {
			return nil, err
		}
		for _, w := range engine.InventoryWarnings(hosts) { // once, at start
			o.Warn("warning: " + w)
		}
	}
	s := &Server{o: o, reg: tools.Default(o.Policy), secrets: redact.NewSet()}
	s.secrets.AddEnviron(os.Environ())
	// A step is approved by its client's approver (clients.of, set as the
	// executor's guard for the call); the hosts' own approver asks nobody.
	s.approve = safety.NewApprover(o.Approve, nil)
	s.clients.mode = o.Approve
	s.hosts = newPool(s)
	s.clients.ended = func(c *client) { s.hosts.retireScope(c.scope) }
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agent", Title: "agent: safe remote tools", Version: o.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			// A step's approval is asked in the middle of the step (the
			// executor waits for the answer, as at a terminal): the
			// protocol versions that let a server send elicitation/create
			// while serving a call. 2026-07-28 wants multi round-trip
			// results instead (SEP-2322), which would need the executor to
			// pause a step across calls.
			SupportedProtocolVersions: protocolVersions(),
			Logger:                    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
	for _, name := range s.reg.Names() {
		t, _ := s.reg.Lookup(name)
		s.mcp.AddTool(&mcp.Tool{Name: name, Description: t.Description() + hostNote, InputSchema: stepSchema(t.Schema())},
			s.stepHandler(name))
	}
	s.addOwnTools()
	rctx, cancel := context.WithCancel(context.Background())
	s.stopReap, s.reaped = cancel, make(chan struct{})
	go func() {
		defer close(s.reaped)
		s.reapDead(rctx)
	}()
	return s, nil
}

const instructions = "agent runs commands and file operations on remote hosts over SSH. " +
	"Every call names its host. Each step is classified safe/medium/high from its parsed shell syntax; " +
	"steps above the server's --approve level are asked of the user, and refused when they cannot be. " +
	"File changes are journaled: the undo tool puts them back."

const hostNote = " Runs on the host named by `host`, through agent's safety checks, audit log and undo journal."

// elicitInCall is the newest protocol version whose servers may elicit
// while serving a request.
const elicitInCall = "2025-11-25"

// protocolVersions are the SDK's versions up to elicitInCall.
func protocolVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= elicitInCall {
			out = append(out, v)
		}
	}
	return out
}

// MCP is the underlying SDK server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Session is the agent session id of the host's next changes (what undo
// restores by default).
func (s *Server) Session(host string) string { return s.hosts.session(poolKey("", host)) }

// stopWait is how long Close waits for cancelled calls to end.
const stopWait = 3 * time.Second

// Close cancels every running call (killing its command, as Ctrl-C does
// for the CLI), waits a moment for them to end, and closes every
// connection.
func (s *Server) Close() {
	s.stopReap()
	<-s.reaped
	s.running.stop(stopWait)
	s.hosts.close()
}

// toolError is a tool result with isError: what the client's model should
// see and may fix.
func toolError(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

// textResult is a result with text and, when structured is not nil, the
// same facts as structured content.
func textResult(text string, isError bool, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}

// jsonResult is a result whose text is v as indented JSON.
func jsonResult(v any, isError bool) *mcp.CallToolResult {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return toolError("encode result: %v", err)
	}
	return textResult(string(b), isError, v)
}
