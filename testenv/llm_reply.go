package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Reply is one scripted answer of the LLMServer.
//
// Real-model misbehaviour is served with Quirks, Reasoning, or plainly by
// scripting it: more than 3 ToolCalls, or a ToolCall naming a tool the
// request did not offer.
type Reply struct {
	Content   string     // the assistant's text
	ToolCalls []ToolCall // ids are generated when empty
	// Reasoning is DeepSeek's reasoning_content beside the content.
	Reasoning string
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string
	// Token usage reported; 0 means estimated from the request and reply
	// sizes (about 4 bytes a token).
	PromptTokens, CompletionTokens int
	// Delay before answering; a cancelled request or Close ends it.
	Delay time.Duration
	// Status, when not 0 or 200, answers with an error body instead:
	// Message (a default per status when empty) and, with RetryAfter, the
	// Retry-After header (whole seconds, rounded up) and Retry-After-Ms.
	Status     int
	Message    string
	RetryAfter time.Duration
	Quirks     Quirk
	// Func, when set, is called with the decoded request and its result is
	// served instead (its own Func is ignored).
	Func func(req *ChatRequest) Reply
}

// ToolCall is a scripted tool call; Arguments is the raw JSON text.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Quirk switches on a misbehaviour real models show.
type Quirk uint

const (
	// QuirkCallsInFencedJSON moves the tool calls into the content, each
	// as a ```json fenced {"name":…,"arguments":{…}} block; no tool_calls.
	QuirkCallsInFencedJSON Quirk = 1 << iota
	// QuirkCallsInTags moves them into the content as
	// <tool_call>{"name":…,"arguments":{…}}</tool_call>.
	QuirkCallsInTags
	// QuirkCallsInBareJSON moves them into the content as bare
	// {"name":…,"arguments":{…}} objects, one a line.
	QuirkCallsInBareJSON
	// QuirkArgumentsObject sends function.arguments as a JSON object
	// instead of a string (Arguments must then be valid JSON).
	QuirkArgumentsObject
	// QuirkArgumentsEmpty sends function.arguments as "".
	QuirkArgumentsEmpty
	// QuirkMissingIDs leaves out the tool calls' "id".
	QuirkMissingIDs
	// QuirkDuplicateIDs gives every tool call the first call's id.
	QuirkDuplicateIDs
	// QuirkStopWithCalls answers finish_reason "stop" with tool calls.
	QuirkStopWithCalls
)

// Text is a reply with only content.
func Text(content string) Reply { return Reply{Content: content} }

// Call is a tool call to name with raw JSON arguments.
func Call(name, arguments string) ToolCall { return ToolCall{Name: name, Arguments: arguments} }

// Calls is a reply with tool calls and no content.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Respond is a reply computed from the request it answers.
func Respond(f func(req *ChatRequest) Reply) Reply { return Reply{Func: f} }

// ErrorReply answers with status and message ("" for the default).
func ErrorReply(status int, message string) Reply {
	return Reply{Status: status, Message: message}
}

// RateLimited answers 429 with a Retry-After of after.
func RateLimited(after time.Duration) Reply {
	return Reply{Status: http.StatusTooManyRequests, RetryAfter: after}
}

// apiError is the error body of a scripted error reply.
func (r Reply) apiError() *APIError {
	e := &APIError{Message: r.Message, Type: "invalid_request_error"}
	def := "scripted error"
	switch {
	case r.Status == http.StatusTooManyRequests:
		def = "Rate limit reached for requests. Please try again later."
		e.Type, e.Code = "requests", strPtr("rate_limit_exceeded")
	case r.Status == http.StatusUnauthorized:
		def = "Incorrect API key provided."
		e.Code = strPtr("invalid_api_key")
	case r.Status == http.StatusServiceUnavailable:
		def = "The server is overloaded or not ready yet."
		e.Type = "server_error"
	case r.Status >= 500:
		def = "The server had an error while processing your request. Sorry about that!"
		e.Type = "server_error"
	}
	if e.Message == "" {
		e.Message = def
	}
	return e
}

// chatResponse is the wire form of a chat completion.
type chatResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   chatUsage    `json:"usage"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type responseMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Reasoning *string        `json:"reasoning_content,omitempty"`
	ToolCalls []ChatToolCall `json:"tool_calls,omitempty"`
	Refusal   *string        `json:"refusal"`
}

type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// render builds the response to req (whose body had bodyLen bytes).
func (s *LLMServer) render(req *ChatRequest, bodyLen int, r Reply) chatResponse {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	calls := make([]ChatToolCall, 0, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_scripted%04d%02d", seq, i)
		}
		tc := ChatToolCall{ID: id, Type: "function"}
		tc.Function.Name = c.Name
		tc.Function.Arguments = jsonString(c.Arguments)
		switch {
		case r.Quirks&QuirkArgumentsEmpty != 0:
			tc.Function.Arguments = jsonString("")
		case r.Quirks&QuirkArgumentsObject != 0 && json.Valid([]byte(c.Arguments)):
			tc.Function.Arguments = json.RawMessage(c.Arguments)
		}
		switch {
		case r.Quirks&QuirkMissingIDs != 0:
			tc.ID = ""
		case r.Quirks&QuirkDuplicateIDs != 0 && i > 0:
			tc.ID = calls[0].ID
		}
		calls = append(calls, tc)
	}

	content := r.Content
	if inText := r.Quirks & (QuirkCallsInFencedJSON | QuirkCallsInTags | QuirkCallsInBareJSON); inText != 0 && len(r.ToolCalls) > 0 {
		parts := []string{}
		if content != "" {
			parts = append(parts, content)
		}
		for _, c := range r.ToolCalls {
			obj := callInText(c)
			switch {
			case inText&QuirkCallsInFencedJSON != 0:
				parts = append(parts, "```json\n"+obj+"\n```")
			case inText&QuirkCallsInTags != 0:
				parts = append(parts, "<tool_call>\n"+obj+"\n</tool_call>")
			default:
				parts = append(parts, obj)
			}
		}
		content = strings.Join(parts, "\n")
		calls = nil
	}

	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
		if len(calls) > 0 && r.Quirks&QuirkStopWithCalls == 0 {
			finish = "tool_calls"
		}
	}
	msg := responseMessage{Role: "assistant"}
	if content != "" || len(calls) == 0 {
		msg.Content = &content
	}
	if r.Reasoning != "" {
		msg.Reasoning = &r.Reasoning
	}
	msg.ToolCalls = calls

	prompt, completion := r.PromptTokens, r.CompletionTokens
	if prompt == 0 {
		prompt = estimateTokens(bodyLen)
	}
	if completion == 0 {
		n := len(content) + len(r.Reasoning)
		for _, c := range calls {
			n += len(c.Function.Name) + len(c.Function.Arguments)
		}
		completion = estimateTokens(n)
	}
	return chatResponse{
		ID:      fmt.Sprintf("chatcmpl-scripted%06d", seq),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []chatChoice{{Message: msg, FinishReason: finish}},
		Usage:   chatUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion},
	}
}

// callInText is a tool call the way models write it in text:
// {"name": …, "arguments": {…}}.
func callInText(c ToolCall) string {
	args := json.RawMessage(c.Arguments)
	if !json.Valid(args) {
		args = jsonString(c.Arguments)
	}
	b, _ := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{c.Name, args})
	return string(b)
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// estimateTokens is a rough token count for n bytes of text (~4 a token).
func estimateTokens(n int) int { return max(1, (n+3)/4) }
