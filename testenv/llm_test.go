package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func llmClient(s *LLMServer, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL
	return openai.NewClientWithConfig(cfg)
}

// postChat sends body raw and returns the status, headers and decoded body.
func postChat(t *testing.T, s *LLMServer, body string) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, raw)
	}
	return resp.StatusCode, resp.Header, m
}

// firstMessage is choices[0].message of a decoded response.
func firstMessage(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	choices, _ := m["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("choices = %v", m["choices"])
	}
	return choices[0].(map[string]any)["message"].(map[string]any)
}

var stepTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name:        "execute_command",
	Description: "run a command",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{
		"command": map[string]any{"type": "string"},
	}, "required": []string{"command"}},
}}

func TestLLMServerGoOpenAIConversation(t *testing.T) {
	s := StartLLMServer(t,
		Reply{Content: "let me look", ToolCalls: []ToolCall{Call("execute_command", `{"command":"cat ~/test/a.sh"}`)}, Reasoning: "thinking"},
		Respond(func(req *ChatRequest) Reply { return Text("the tool said: " + req.LastMessage().Text()) }),
	)
	s.RequireKey("sk-test-key-123456")
	c := llmClient(s, "sk-test-key-123456")
	ctx := context.Background()
	req := openai.ChatCompletionRequest{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "you are an agent"}, {Role: "user", Content: "fix a.sh"}},
		Tools:    []openai.Tool{stepTool},
	}
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonToolCalls || len(ch.Message.ToolCalls) != 1 || ch.Message.Content != "let me look" || ch.Message.ReasoningContent != "thinking" {
		t.Fatalf("first reply = %+v", ch)
	}
	call := ch.Message.ToolCalls[0]
	if call.ID == "" || call.Function.Name != "execute_command" || call.Function.Arguments != `{"command":"cat ~/test/a.sh"}` {
		t.Fatalf("tool call = %+v", call)
	}
	if resp.Usage.PromptTokens <= 0 || resp.Usage.CompletionTokens <= 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	firstPrompt := resp.Usage.PromptTokens

	ch.Message.ReasoningContent = ""
	req.Messages = append(req.Messages, ch.Message, openai.ChatCompletionMessage{Role: "tool", ToolCallID: call.ID, Content: "echo 1"})
	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "the tool said: echo 1" || resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Fatalf("second reply = %+v", resp.Choices[0])
	}
	if resp.Usage.PromptTokens <= firstPrompt {
		t.Errorf("prompt tokens did not grow with the conversation: %d then %d", firstPrompt, resp.Usage.PromptTokens)
	}

	recs := s.Requests()
	if len(recs) != 2 || recs[1].Status != 200 || recs[1].Request.Model != "gpt-4o-mini" || len(recs[1].Request.Messages) != 4 {
		t.Fatalf("records = %+v", recs)
	}
	if got := recs[0].Header.Get("Authorization"); got != "Bearer sk-test-key-123456" {
		t.Errorf("recorded Authorization = %q", got)
	}
	if names := recs[0].Request.ToolNames(); len(names) != 1 || names[0] != "execute_command" {
		t.Errorf("recorded tools = %v", names)
	}
	s.CheckNoRejections(t)
	if s.Remaining() != 0 {
		t.Errorf("Remaining = %d", s.Remaining())
	}
}

func TestLLMServerAuthAndModels(t *testing.T) {
	s := StartLLMServer(t, Text("hi"))
	s.RequireKey("sk-right-key-0000")
	ctx := context.Background()

	_, err := llmClient(s, "sk-wrong-key-9999").CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: "gpt-4o", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}},
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || apiErr.Code != "invalid_api_key" || !strings.Contains(apiErr.Message, "Incorrect API key provided: sk-*****9999") {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := llmClient(s, "").ListModels(ctx); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || !strings.Contains(apiErr.Message, "You didn't provide an API key") {
		t.Fatalf("no key: %v", err)
	}
	models, err := llmClient(s, "sk-right-key-0000").ListModels(ctx)
	if err != nil || len(models.Models) == 0 || models.Models[0].ID != "gpt-4o-mini" {
		t.Fatalf("models = %+v, %v", models, err)
	}
	if n := len(s.Rejections()); n != 1 || s.Remaining() != 1 {
		t.Fatalf("rejections = %d, remaining = %d; a refused request must not use the script", n, s.Remaining())
	}

	s.SetModels("only-model")
	_, err = llmClient(s, "sk-right-key-0000").CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: "gpt-4o", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}},
	})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Fatalf("unknown model: %v", err)
	}
}

func TestLLMServerQuirks(t *testing.T) {
	calls := []ToolCall{Call("read_file", `{"file_path":"a.sh"}`), Call("execute_command", `{"command":"sh a.sh"}`)}
	const req = `{"model":"m","messages":[{"role":"user","content":"go"}]}`
	tests := []struct {
		name  string
		reply Reply
		check func(t *testing.T, msg map[string]any, finish string)
	}{
		{"fenced json", Reply{Content: "Running:", ToolCalls: calls, Quirks: QuirkCallsInFencedJSON}, func(t *testing.T, msg map[string]any, finish string) {
			want := "Running:\n```json\n{\"name\":\"read_file\",\"arguments\":{\"file_path\":\"a.sh\"}}\n```\n```json\n{\"name\":\"execute_command\",\"arguments\":{\"command\":\"sh a.sh\"}}\n```"
			if msg["content"] != want || msg["tool_calls"] != nil || finish != "stop" {
				t.Errorf("content = %q, tool_calls = %v, finish = %s", msg["content"], msg["tool_calls"], finish)
			}
		}},
		{"tags", Reply{ToolCalls: calls[:1], Quirks: QuirkCallsInTags}, func(t *testing.T, msg map[string]any, _ string) {
			if want := "<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"file_path\":\"a.sh\"}}\n</tool_call>"; msg["content"] != want {
				t.Errorf("content = %q", msg["content"])
			}
		}},
		{"bare json", Reply{ToolCalls: calls, Quirks: QuirkCallsInBareJSON}, func(t *testing.T, msg map[string]any, _ string) {
			if want := `{"name":"read_file","arguments":{"file_path":"a.sh"}}` + "\n" + `{"name":"execute_command","arguments":{"command":"sh a.sh"}}`; msg["content"] != want {
				t.Errorf("content = %q", msg["content"])
			}
		}},
		{"arguments object", Reply{ToolCalls: calls[:1], Quirks: QuirkArgumentsObject}, func(t *testing.T, msg map[string]any, _ string) {
			args := toolCallsOf(t, msg)[0]["function"].(map[string]any)["arguments"]
			if a, ok := args.(map[string]any); !ok || a["file_path"] != "a.sh" {
				t.Errorf("arguments = %#v", args)
			}
		}},
		{"arguments empty", Reply{ToolCalls: calls[:1], Quirks: QuirkArgumentsEmpty}, func(t *testing.T, msg map[string]any, _ string) {
			if args := toolCallsOf(t, msg)[0]["function"].(map[string]any)["arguments"]; args != "" {
				t.Errorf("arguments = %#v", args)
			}
		}},
		{"missing ids", Reply{ToolCalls: calls, Quirks: QuirkMissingIDs}, func(t *testing.T, msg map[string]any, _ string) {
			for _, c := range toolCallsOf(t, msg) {
				if _, ok := c["id"]; ok {
					t.Errorf("id present: %v", c)
				}
			}
		}},
		{"duplicate ids", Reply{ToolCalls: calls, Quirks: QuirkDuplicateIDs}, func(t *testing.T, msg map[string]any, _ string) {
			cs := toolCallsOf(t, msg)
			if cs[0]["id"] == nil || cs[0]["id"] != cs[1]["id"] {
				t.Errorf("ids = %v, %v", cs[0]["id"], cs[1]["id"])
			}
		}},
		{"stop with calls", Reply{ToolCalls: calls, Quirks: QuirkStopWithCalls}, func(t *testing.T, msg map[string]any, finish string) {
			if len(toolCallsOf(t, msg)) != 2 || finish != "stop" || msg["content"] != nil {
				t.Errorf("finish = %s, msg = %v", finish, msg)
			}
		}},
		{"reasoning content", Reply{Content: "done", Reasoning: "I think"}, func(t *testing.T, msg map[string]any, _ string) {
			if msg["reasoning_content"] != "I think" || msg["content"] != "done" {
				t.Errorf("msg = %v", msg)
			}
		}},
		{"four calls, unknown tool", Calls(Call("a", "{}"), Call("b", "{}"), Call("c", "{}"), Call("rm_everything", "{}")), func(t *testing.T, msg map[string]any, finish string) {
			cs := toolCallsOf(t, msg)
			if len(cs) != 4 || cs[3]["function"].(map[string]any)["name"] != "rm_everything" || finish != "tool_calls" {
				t.Errorf("calls = %v", cs)
			}
			ids := map[any]bool{}
			for _, c := range cs {
				ids[c["id"]] = true
			}
			if len(ids) != 4 {
				t.Errorf("generated ids are not unique: %v", ids)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := StartLLMServer(t, tc.reply)
			status, _, body := postChat(t, s, req)
			if status != 200 {
				t.Fatalf("status %d: %v", status, body)
			}
			finish := body["choices"].([]any)[0].(map[string]any)["finish_reason"].(string)
			tc.check(t, firstMessage(t, body), finish)
		})
	}
}

func toolCallsOf(t *testing.T, msg map[string]any) []map[string]any {
	t.Helper()
	raw, _ := msg["tool_calls"].([]any)
	var out []map[string]any
	for _, c := range raw {
		out = append(out, c.(map[string]any))
	}
	if len(out) == 0 {
		t.Fatalf("no tool_calls in %v", msg)
	}
	return out
}

func TestLLMServerDelayHonoursCancel(t *testing.T) {
	s := StartLLMServer(t, Reply{Content: "late", Delay: time.Hour}, Reply{Content: "quick", Delay: 20 * time.Millisecond})
	c := llmClient(s, "k")
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.CreateChatCompletion(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	start = time.Now()
	resp, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil || resp.Choices[0].Message.Content != "quick" {
		t.Fatalf("resp = %+v, %v", resp, err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("delay not applied: %v", d)
	}
	waitFor(t, func() bool { return s.Requests()[0].Status == 0 && len(s.Rejections()) == 0 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 5s")
}

func TestLLMServerScriptedErrors(t *testing.T) {
	s := StartLLMServer(t, RateLimited(1500*time.Millisecond), ErrorReply(500, ""), ErrorReply(503, "overloaded"), Text("ok"))
	const req = `{"model":"m","messages":[{"role":"user","content":"x"}]}`

	status, h, body := postChat(t, s, req)
	e := body["error"].(map[string]any)
	if status != 429 || h.Get("Retry-After") != "2" || h.Get("Retry-After-Ms") != "1500" || e["code"] != "rate_limit_exceeded" || e["type"] != "requests" {
		t.Fatalf("429: %d %v %v", status, h, body)
	}
	if status, _, body = postChat(t, s, req); status != 500 || body["error"].(map[string]any)["type"] != "server_error" {
		t.Fatalf("500: %d %v", status, body)
	}
	_, err := llmClient(s, "k").CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}},
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || apiErr.Message != "overloaded" {
		t.Fatalf("503: %v", err)
	}
	if status, _, _ = postChat(t, s, req); status != 200 {
		t.Fatalf("after errors: %d", status)
	}
	if n := len(s.Rejections()); n != 0 {
		t.Fatalf("scripted errors counted as rejections: %d", n)
	}

	status, _, body = postChat(t, s, req)
	if msg := body["error"].(map[string]any)["message"]; status != 500 || !strings.Contains(msg.(string), "script exhausted after 4 requests") {
		t.Fatalf("exhausted: %d %v", status, body)
	}
	if len(s.Rejections()) != 1 {
		t.Fatal("exhaustion not recorded as a rejection")
	}
	s.Push(Text("more"))
	if status, _, _ = postChat(t, s, req); status != 200 {
		t.Fatalf("after Push: %d", status)
	}
}

func TestLLMServerConcurrent(t *testing.T) {
	const n = 32
	var script []Reply
	for range n {
		script = append(script, Respond(func(req *ChatRequest) Reply { return Text("echo " + req.LastMessage().Text()) }))
	}
	s := StartLLMServer(t, script...)
	c := llmClient(s, "k")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprint(i)
			resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
				Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: want}},
			})
			if err == nil && resp.Choices[0].Message.Content != "echo "+want {
				err = fmt.Errorf("got %q for %s", resp.Choices[0].Message.Content, want)
			}
			if err != nil {
				errs <- err
			}
		})
		if i%4 == 0 {
			s.Push() // concurrent writers
			_ = s.Requests()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(s.Requests()); got != n || s.Remaining() != 0 {
		t.Fatalf("recorded %d, remaining %d", got, s.Remaining())
	}
	s.CheckNoRejections(t)
}

func TestLLMServerCloseUnblocksDelay(t *testing.T) {
	s, err := NewLLMServer(Reply{Delay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}]}`)))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, func() bool { return len(s.Requests()) == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("request still blocked after Close")
	}
}
