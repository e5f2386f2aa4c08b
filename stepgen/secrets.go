package stepgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/redact"
)

// What goes to the model from the host — step observations and the
// history summary — leaves without secret values (issue 14 §4): the values
// of the variables it is not shown (inventory secrets, execctx exposure)
// always, and what safety's patterns find (secret-named assignments,
// private keys, bearer and basic credentials, URL passwords, key shapes)
// unless Config.SendSecrets. Each becomes [REDACTED:NAME] and an
// observation that lost one says so.

// observation is a step's observation as the model gets it.
func (r *runner) observation(s string) string {
	s, names := r.scrub(s)
	if len(names) == 0 {
		return s
	}
	return s + fmt.Sprintf("\n[agent: secret values withheld from you: %s. They are still there on the host: "+
		"use them where they are (files, variables as {{name}}); do not print or ask for them.]", strings.Join(names, ", "))
}

// history is the history summary as the model gets it: each output
// redacted before the summary clips it (execctx.SetRedactor), then the
// whole scrubbed.
func (r *runner) history() string {
	r.exec.Vars().SetRedactor(func(s string) string {
		out, _ := r.cfg.Secrets.Named(s, r.cfg.SendSecrets)
		return out
	})
	s, _ := r.scrub(r.exec.Vars().Summary(r.cfg.SummaryBudget))
	return s
}

// historyParts is history in parts (execctx.SummaryParts), each scrubbed
// the same way.
func (r *runner) historyParts() execctx.SummaryParts {
	r.exec.Vars().SetRedactor(func(s string) string {
		out, _ := r.cfg.Secrets.Named(s, r.cfg.SendSecrets)
		return out
	})
	p := r.exec.Vars().Parts(r.cfg.SummaryBudget)
	p.Steps, _ = r.scrub(p.Steps)
	p.Vars, _ = r.scrub(p.Vars)
	p.Files, _ = r.scrub(p.Files)
	return p
}

// scrub replaces the secrets of s and names them.
func (r *runner) scrub(s string) (string, []string) {
	s, names := r.exec.Vars().ScrubMarked(s, func(name string) string { return redact.NamedMark(redact.MarkName(name)) })
	for i, n := range names {
		names[i] = redact.MarkName(n)
	}
	s, more := r.cfg.Secrets.Named(s, r.cfg.SendSecrets)
	for _, n := range more {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return s, names
}

// assistant is the history entry of a reply, as sent back to the model:
// a secret the model wrote itself (in a command, an argument, its text)
// does not go back either, so that no request carries one (unless
// Config.SendSecrets). Arguments stay a JSON object: a secret-named key's
// value is replaced whole, other strings through redact.Named.
func (r *runner) assistant(resp llm.Response) llm.Message {
	m := llm.AssistantMessage(resp)
	named := func(s string) string {
		s, _ = r.cfg.Secrets.Named(s, r.cfg.SendSecrets)
		return s
	}
	m.Content, m.Reasoning = named(m.Content), named(m.Reasoning)
	calls := make([]llm.ToolCall, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		var args map[string]any
		if json.Unmarshal(tc.Arguments, &args) == nil && args != nil {
			if b, err := json.Marshal(redactArgs(args, named, !r.cfg.SendSecrets)); err == nil {
				tc.Arguments = b
			}
		}
		calls[i] = tc
	}
	m.ToolCalls = calls
	return m
}

// redactArgs is redact.Params with named marks: strings through named,
// and, when byName, a secret-named key's string value replaced whole.
func redactArgs(v any, named func(string) string, byName bool) any {
	switch x := v.(type) {
	case string:
		return named(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if _, isStr := e.(string); isStr && byName && redact.SecretKey(k) {
				out[k] = redact.NamedMark(redact.MarkName(k))
				continue
			}
			out[k] = redactArgs(e, named, byName)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactArgs(e, named, byName)
		}
		return out
	}
	return v
}
