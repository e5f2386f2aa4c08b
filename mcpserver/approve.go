package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/safety"
)

// callerKey carries the MCP session of the call a step belongs to, for
// the prompter: the question goes to the client that made the call.
type callerKey struct{}

func withCaller(ctx context.Context, ss *mcp.ServerSession) context.Context {
	return context.WithValue(ctx, callerKey{}, ss)
}

// errNoElicitation is the refusal when the client cannot ask its user.
var errNoElicitation = errors.New("the MCP client cannot ask its user (it does not support elicitation)")

// elicitPrompter asks the calling client's user about a step with MCP
// elicitation: the resolved command (or file and diff), its level and
// reasons. Accept with approve true allows it (always: every identical
// step for the rest of the server's run); decline, cancel or approve
// false refuses it.
type elicitPrompter struct{}

// approvalSchema is the form the user answers.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Run this step", "default": false},
		"always":  map[string]any{"type": "boolean", "title": "Also run identical steps without asking", "default": false},
	},
	"required": []string{"approve"},
}

func (elicitPrompter) Approve(ctx context.Context, req safety.Request) (safety.Decision, error) {
	ss, _ := ctx.Value(callerKey{}).(*mcp.ServerSession)
	if ss == nil || !canElicit(ss) {
		return safety.Decision{}, errNoElicitation
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: question(req), RequestedSchema: approvalSchema})
	if err != nil {
		return safety.Decision{}, fmt.Errorf("elicitation: %w", err)
	}
	why := level(req.Risk)
	if res.Action != "accept" {
		return safety.Decision{Reason: fmt.Sprintf("the user answered %s (%s)", res.Action, why)}, nil
	}
	if ok, _ := res.Content["approve"].(bool); !ok {
		return safety.Decision{Reason: "declined by the user (" + why + ")"}, nil
	}
	always, _ := res.Content["always"].(bool)
	return safety.Decision{Allowed: true, Always: always, Reason: "approved by the user (" + why + ")"}, nil
}

// canElicit reports whether the session's client said it supports
// elicitation.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// level says a step's risk: "high risk: reason; reason".
func level(r safety.Assessment) string {
	s := r.Level.String() + " risk"
	if len(r.Reasons) > 0 {
		s += ": " + strings.Join(r.Reasons, "; ")
	}
	return s
}

// maxDiff bounds the diff shown in a question.
const maxDiff = 8 << 10

// question is what the user is asked.
func question(req safety.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent: %s on %s needs your approval — %s.\n", req.Tool, req.Host, level(req.Risk))
	if req.Command != "" {
		fmt.Fprintf(&b, "\nCommand:\n%s\n", req.Command)
	}
	if req.Path != "" {
		fmt.Fprintf(&b, "\nFile: %s\n", req.Path)
	}
	if d := req.Diff; d != "" {
		if len(d) > maxDiff {
			d = d[:maxDiff] + "\n… [diff truncated]"
		}
		fmt.Fprintf(&b, "\n%s\n", d)
	}
	return b.String()
}
