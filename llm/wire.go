package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// toWire converts the history and tools for go-openai.
func toWire(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		w := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			w.ToolCalls = append(w.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: args},
			})
		}
		if len(w.ToolCalls) > 0 {
			w.ReasoningContent = m.Reasoning
		}
		// content is omitted when empty, and APIs require it on tool replies
		// and on assistant messages without tool calls.
		if w.Content == "" && (m.Role == RoleTool || m.Role == RoleAssistant && len(w.ToolCalls) == 0) {
			w.Content = "(empty)"
		}
		out = append(out, w)
	}
	return out
}

func toolsToWire(tools []Tool) []openai.Tool {
	out := make([]openai.Tool, 0, len(tools))
	for _, t := range tools {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	return out
}

// toolChoice maps "", "auto", "none", "required" to themselves and anything
// else to that tool's name.
func toolChoice(c string) any {
	switch c {
	case "":
		return nil
	case "auto", "none", "required":
		return c
	}
	return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: c}}
}

// fromWire is the raw Response of the first choice, before Normalize.
func fromWire(r openai.ChatCompletionResponse) Response {
	out := Response{Usage: Usage{Calls: 1, Prompt: r.Usage.PromptTokens, Completion: r.Usage.CompletionTokens}}
	if len(r.Choices) == 0 {
		return out
	}
	c := r.Choices[0]
	out.Content = c.Message.Content
	if out.Content == "" {
		for _, p := range c.Message.MultiContent {
			out.Content += p.Text
		}
	}
	out.Reasoning = strings.TrimSpace(c.Message.ReasoningContent)
	out.FinishReason = string(c.FinishReason)
	for _, tc := range c.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
	}
	if fc := c.Message.FunctionCall; fc != nil && len(out.ToolCalls) == 0 { // legacy function_call
		out.ToolCalls = []ToolCall{{Name: fc.Name, Arguments: json.RawMessage(fc.Arguments)}}
	}
	return out
}

// sentKey is the context key of the slot that receives a request's body
// as sent (Exchange.Body).
type sentKey struct{}

// repairDoer rewrites what go-openai cannot decode before it sees it:
// tool-call arguments sent as a JSON object (Ollama, some vLLM templates)
// instead of a string. Everything else passes through untouched.
type repairDoer struct{ next openai.HTTPDoer }

func (d repairDoer) Do(req *http.Request) (*http.Response, error) {
	if slot, ok := req.Context().Value(sentKey{}).(*[]byte); ok && req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			*slot, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	resp, err := d.next.Do(req)
	if err != nil || resp.StatusCode/100 != 2 || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if fixed, ok := stringifyArguments(body); ok {
		body = fixed
		resp.Header.Set(repairedHeader, "arguments given as JSON, not as a string")
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// repairedHeader tells Chat that repairDoer changed the body.
const repairedHeader = "X-Agent-Llm-Repaired"

type rawObj = map[string]json.RawMessage

// stringifyArguments turns choices[].message.tool_calls[].function.arguments
// that are not JSON strings into strings holding their JSON text.
func stringifyArguments(body []byte) ([]byte, bool) {
	if !bytes.Contains(body, []byte(`"arguments"`)) {
		return nil, false
	}
	var top rawObj
	var choices []rawObj
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["choices"], &choices) != nil {
		return nil, false
	}
	changed := false
	for _, ch := range choices {
		var msg rawObj
		var calls []rawObj
		if json.Unmarshal(ch["message"], &msg) != nil || json.Unmarshal(msg["tool_calls"], &calls) != nil {
			continue
		}
		for _, call := range calls {
			var fn rawObj
			if json.Unmarshal(call["function"], &fn) != nil {
				continue
			}
			a := bytes.TrimSpace(fn["arguments"])
			if len(a) == 0 || a[0] == '"' {
				continue
			}
			text := string(a)
			if text == "null" {
				text = ""
			}
			fn["arguments"], _ = json.Marshal(text)
			call["function"], _ = json.Marshal(fn)
			changed = true
		}
		if changed {
			msg["tool_calls"], _ = json.Marshal(calls)
			ch["message"], _ = json.Marshal(msg)
		}
	}
	if !changed {
		return nil, false
	}
	top["choices"], _ = json.Marshal(choices)
	out, err := json.Marshal(top)
	return out, err == nil
}
