package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/redact"
)

// transcriptOptions opens path (when not empty) for the transcript of every
// message exchanged with the model and returns the client options that
// write it, and a func that closes the file.
//
// The file gets one JSON object per line, appended, with an "event" key as in --json: for each Chat call a
// "request" line (the messages and tools sent, and "body": the request body
// exactly as it was sent) and then a "response" line (the normalized reply:
// text, reasoning, tool calls, usage) or an "error" line; both carry the
// call's "seq". A request line records what was sent, nothing taken out
// or added: step outputs lose their secrets before they are sent (stepgen,
// unless --send-secrets), not here. Response and error lines are redacted
// the way the audit log redacts (the run's secret set, its Params on tool
// arguments). An embeddings call (semantic_search) is a request line with
// "endpoint": "embeddings" and the body as sent (the texts embedded), then
// a response line with "embeddings": the number of vectors (the vectors
// themselves are left out), or an error line. The llm client masks its
// API key before anything reaches this file.
// The file is created with mode 0600: it holds command output; an existing
// file readable by others is chmod-ed to 0600 first.
func transcriptOptions(path string, set *redact.Set) ([]llm.Option, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, usagef("--transcript: %w", err)
	}
	// An existing file others can read is made private before anything
	// is appended; one that cannot be is refused.
	fi, err := f.Stat()
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		if err = f.Chmod(0o600); err != nil {
			err = fmt.Errorf("%s is readable by others (mode %04o) and cannot be made private: %w", path, fi.Mode().Perm(), err)
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, usagef("--transcript: %w", err)
	}
	t := &transcript{f: f, path: path, set: set}
	return []llm.Option{llm.WithExchangeHook(t.write)}, t.close, nil
}

type transcript struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	set    *redact.Set // the run's secret set
	failed bool
}

// Lines of the transcript.
type (
	trRequest struct {
		Event      string      `json:"event"` // "request"
		Seq        int         `json:"seq"`
		Time       string      `json:"time"`
		Endpoint   string      `json:"endpoint,omitempty"` // "embeddings"; absent for chat
		Model      string      `json:"model"`
		ToolChoice string      `json:"tool_choice,omitempty"`
		Messages   []trMessage `json:"messages,omitempty"`
		Tools      []trTool    `json:"tools,omitempty"`
		// Body is the request body as sent; absent when none was.
		Body json.RawMessage `json:"body,omitempty"`
	}
	trMessage struct {
		Role       string       `json:"role"`
		Content    string       `json:"content"`
		Reasoning  string       `json:"reasoning,omitempty"`
		ToolCalls  []trToolCall `json:"tool_calls,omitempty"`
		ToolCallID string       `json:"tool_call_id,omitempty"`
	}
	trToolCall struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments any    `json:"arguments"` // the JSON object, or the text when it is not one
	}
	trTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	trResponse struct {
		Event            string       `json:"event"` // "response"
		Seq              int          `json:"seq"`
		Time             string       `json:"time"`
		DurationMS       int64        `json:"duration_ms"`
		Content          string       `json:"content"`
		Reasoning        string       `json:"reasoning,omitempty"`
		ToolCalls        []trToolCall `json:"tool_calls,omitempty"`
		FinishReason     string       `json:"finish_reason,omitempty"`
		PromptTokens     int          `json:"prompt_tokens"`
		CompletionTokens int          `json:"completion_tokens"`
		Embeddings       int          `json:"embeddings,omitempty"` // vectors an embeddings call returned
		Problems         []string     `json:"problems,omitempty"`
		Repairs          []string     `json:"repairs,omitempty"`
	}
	trError struct {
		Event      string `json:"event"` // "error"
		Seq        int    `json:"seq"`
		Time       string `json:"time"`
		DurationMS int64  `json:"duration_ms"`
		Error      string `json:"error"`
	}
)

func (t *transcript) write(x llm.Exchange) {
	end := time.Now().UTC()
	now, start := end.Format(time.RFC3339Nano), end.Add(-x.Duration).Format(time.RFC3339Nano)
	req := trRequest{Event: "request", Seq: x.Seq, Time: start, Model: x.Model, ToolChoice: x.Request.ToolChoice}
	if x.Endpoint == "embeddings" {
		req.Endpoint = x.Endpoint
	}
	for _, m := range x.Request.Messages {
		req.Messages = append(req.Messages, trMessage{Role: m.Role, Content: m.Content,
			Reasoning: m.Reasoning, ToolCalls: sentCalls(m.ToolCalls), ToolCallID: m.ToolCallID})
	}
	if json.Valid(x.Body) {
		req.Body = x.Body
	}
	for _, tl := range x.Request.Tools {
		req.Tools = append(req.Tools, trTool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
	}
	lines := []any{req}
	ms := x.Duration.Milliseconds()
	if x.Err != nil {
		lines = append(lines, trError{Event: "error", Seq: x.Seq, Time: now, DurationMS: ms, Error: t.set.String(x.Err.Error())})
	} else {
		r := x.Response
		resp := trResponse{Event: "response", Seq: x.Seq, Time: now, DurationMS: ms,
			Content: t.set.String(r.Content), Reasoning: t.set.String(r.Reasoning),
			ToolCalls: trCalls(t.set, r.ToolCalls), FinishReason: r.FinishReason,
			PromptTokens: r.Usage.Prompt, CompletionTokens: r.Usage.Completion, Repairs: r.Repairs,
			Embeddings: x.Embeddings}
		for _, p := range r.Problems {
			resp.Problems = append(resp.Problems, t.set.String(fmt.Sprintf("%s: %s", p.CallID, llm.ToolError(p))))
		}
		lines = append(lines, resp)
	}
	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil { // cannot happen with these types; say so rather than drop it
			b, _ = json.Marshal(trError{Event: "error", Seq: x.Seq, Time: now, Error: "transcript: " + err.Error()})
		}
		buf = append(append(buf, b...), '\n')
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.f.Write(buf); err != nil && !t.failed {
		t.failed = true
		fmt.Fprintf(os.Stderr, "agent: --transcript %s: %v\n", t.path, err)
	}
}

// trCalls redacts tool calls: the arguments object through redact.Params
// (secret-named keys and secrets inside strings), anything else as text.
func trCalls(set *redact.Set, calls []llm.ToolCall) []trToolCall {
	var out []trToolCall
	for _, tc := range calls {
		var args any
		var obj map[string]any
		if err := json.Unmarshal(tc.Arguments, &obj); err == nil && obj != nil {
			args = set.Params(obj)
		} else {
			args = set.String(string(tc.Arguments))
		}
		out = append(out, trToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	return out
}

// sentCalls are tool calls as sent: the arguments object, or the text
// when it is not one.
func sentCalls(calls []llm.ToolCall) []trToolCall {
	var out []trToolCall
	for _, tc := range calls {
		var args any = string(tc.Arguments)
		if json.Valid(tc.Arguments) {
			args = json.RawMessage(tc.Arguments)
		}
		out = append(out, trToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	return out
}

func (t *transcript) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.f.Close(); err != nil && !t.failed {
		fmt.Fprintf(os.Stderr, "agent: --transcript %s: %v\n", t.path, err)
	}
}
