package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/autoshell/agent/testenv"
)

// llmServers maps each script's $AGENT_BASE_URL to its scripted model.
var llmServers sync.Map // string → *testenv.LLMServer

// startScriptLLM gives a script its own scripted model at $AGENT_BASE_URL
// and fails the script if the model rejected any request agent sent.
func startScriptLLM(env *testscript.Env) error {
	srv, err := testenv.NewLLMServer()
	if err != nil {
		return err
	}
	llmServers.Store(srv.URL, srv)
	env.Setenv("AGENT_BASE_URL", srv.URL)
	env.Setenv("AGENT_MODEL", "gpt-4o-mini")
	env.Defer(func() {
		defer srv.Close()
		llmServers.Delete(srv.URL)
		if rej := srv.Rejections(); len(rej) > 0 {
			for _, r := range rej {
				msg := ""
				if r.Error != nil {
					msg = r.Error.Message
				}
				env.T().Log(fmt.Sprintf("scripted LLM server rejected a request with %d: %s\nbody: %s", r.Status, msg, r.Body))
			}
			env.T().FailNow()
		}
	})
	return nil
}

func scriptLLM(ts *testscript.TestScript) *testenv.LLMServer {
	v, ok := llmServers.Load(ts.Getenv("AGENT_BASE_URL"))
	if !ok {
		ts.Fatalf("no scripted LLM server for %s", ts.Getenv("AGENT_BASE_URL"))
	}
	return v.(*testenv.LLMServer)
}

// scriptReply is one reply in an llm-script file.
type scriptReply struct {
	Content   string `json:"content"`
	Reasoning string `json:"reasoning"`
	ToolCalls []struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // an object, or a string holding the raw text
	} `json:"tool_calls"`
	Status       int      `json:"status"`
	Message      string   `json:"message"`
	RetryAfterMS int      `json:"retry_after_ms"`
	DelayMS      int      `json:"delay_ms"` // wait before answering
	Quirks       []string `json:"quirks"`
}

var quirkNames = map[string]testenv.Quirk{
	"fenced_json": testenv.QuirkCallsInFencedJSON, "tags": testenv.QuirkCallsInTags, "bare_json": testenv.QuirkCallsInBareJSON,
	"arguments_object": testenv.QuirkArgumentsObject, "arguments_empty": testenv.QuirkArgumentsEmpty,
	"missing_ids": testenv.QuirkMissingIDs, "duplicate_ids": testenv.QuirkDuplicateIDs, "stop_with_calls": testenv.QuirkStopWithCalls,
}

// llmScript FILE appends the replies of FILE (a JSON array of scriptReply,
// with $VAR and ${VAR} expanded from the script's environment) to the
// script's model.
func llmScript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: llm-script FILE")
	}
	text := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	var in []scriptReply
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		ts.Fatalf("llm-script %s: %v", args[0], err)
	}
	var out []testenv.Reply
	for i, r := range in {
		rep := testenv.Reply{Content: r.Content, Reasoning: r.Reasoning, Status: r.Status, Message: r.Message,
			RetryAfter: time.Duration(r.RetryAfterMS) * time.Millisecond, Delay: time.Duration(r.DelayMS) * time.Millisecond}
		for _, tc := range r.ToolCalls {
			a := string(tc.Arguments)
			var s string
			if json.Unmarshal(tc.Arguments, &s) == nil {
				a = s
			}
			rep.ToolCalls = append(rep.ToolCalls, testenv.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: a})
		}
		for _, q := range r.Quirks {
			bit, ok := quirkNames[q]
			if !ok {
				ts.Fatalf("llm-script %s: reply %d: unknown quirk %q", args[0], i+1, q)
			}
			rep.Quirks |= bit
		}
		out = append(out, rep)
	}
	scriptLLM(ts).Push(out...)
}

// llmRequests FILE writes the requests the script's model received, one
// JSON body a line, and checks that the whole script was served.
func llmRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: llm-requests FILE")
	}
	srv := scriptLLM(ts)
	var b strings.Builder
	for _, r := range srv.Requests() {
		b.Write(r.Body)
		b.WriteByte('\n')
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
	if n := srv.Remaining(); n > 0 {
		ts.Logf("%d scripted replies were not used", n)
	}
}
