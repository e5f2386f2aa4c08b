package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

var execTool = Tool{Name: "execute_command", Description: "Run a command.", Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)}

// answerAll replies to every call of resp, with ToolError for problems,
// as the agent does.
func answerAll(msgs []Message, resp Response) []Message {
	msgs = append(msgs, AssistantMessage(resp))
	for _, tc := range resp.ToolCalls {
		out := "ran " + tc.Name + " " + string(tc.Arguments)
		if p, ok := resp.ProblemFor(tc.ID); ok {
			out = ToolError(p)
		}
		msgs = append(msgs, ToolMessage(tc.ID, out))
	}
	return msgs
}

// TestQuirksOverHTTP serves each quirk through the real go-openai decoding
// path, checks the repair, then sends the follow-up conversation to the same
// server, which rejects what real APIs reject.
func TestQuirksOverHTTP(t *testing.T) {
	two := []testenv.ToolCall{testenv.Call("read_file", `{"path":"/etc/os-release"}`), testenv.Call("execute_command", `{"command":"uname -a"}`)}
	tests := []struct {
		name    string
		reply   testenv.Reply
		dialect testenv.Dialect
		check   func(t *testing.T, r Response)
	}{
		{name: "fenced json", reply: testenv.Reply{Content: "Let me look.", ToolCalls: two, Quirks: testenv.QuirkCallsInFencedJSON}},
		{name: "tool_call tags", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkCallsInTags}},
		{name: "bare json", reply: testenv.Reply{Content: "Checking.", ToolCalls: two, Quirks: testenv.QuirkCallsInBareJSON}},
		{name: "arguments object", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkArgumentsObject}},
		{name: "arguments empty", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkArgumentsEmpty}, check: func(t *testing.T, r Response) {
			if string(r.ToolCalls[0].Arguments) != "{}" {
				t.Errorf("arguments %s", r.ToolCalls[0].Arguments)
			}
		}},
		{name: "missing ids", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkMissingIDs}},
		{name: "duplicate ids", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkDuplicateIDs}},
		{name: "stop with calls", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkStopWithCalls}},
		{name: "all at once", reply: testenv.Reply{ToolCalls: two, Quirks: testenv.QuirkArgumentsObject | testenv.QuirkMissingIDs | testenv.QuirkStopWithCalls}},
		{name: "more than three", reply: testenv.Calls(two[0], two[1], two[0], two[1], two[0]), check: func(t *testing.T, r Response) {
			if len(r.ToolCalls) != 5 || len(r.Problems) != 2 || r.Problems[0].Kind != ProblemTooManyCalls {
				t.Errorf("calls %d problems %+v", len(r.ToolCalls), r.Problems)
			}
		}},
		{name: "unknown tool", reply: testenv.Calls(testenv.Call("sudo_shell", `{"cmd":"x"}`), two[0]), check: func(t *testing.T, r Response) {
			if len(r.Problems) != 1 || r.Problems[0].Kind != ProblemUnknownTool || !strings.Contains(ToolError(r.Problems[0]), "execute_command, read_file") {
				t.Errorf("problems %+v", r.Problems)
			}
		}},
		{name: "deepseek thinking with tool calls", dialect: testenv.DialectDeepSeekThinking,
			reply: testenv.Reply{Reasoning: "I should read the file.", ToolCalls: two}, check: func(t *testing.T, r Response) {
				if r.Reasoning != "I should read the file." {
					t.Errorf("Reasoning %q", r.Reasoning)
				}
			}},
		{name: "deepseek-reasoner plain answer", dialect: testenv.DialectDeepSeekReasoner,
			reply: testenv.Reply{Reasoning: "Easy.", Content: "It is Linux."}, check: func(t *testing.T, r Response) {
				if r.Reasoning != "Easy." || r.Content != "It is Linux." || len(r.ToolCalls) != 0 || r.FinishReason != "stop" {
					t.Errorf("%+v", r)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testenv.StartLLMServer(t, tt.reply, testenv.Text("Done.")).SetDialect(tt.dialect)
			c, _ := newTestClient(t, srv.URL)
			req := Request{Messages: []Message{{Role: RoleUser, Content: "what OS is this?"}}, Tools: []Tool{readFile, execTool}}
			resp, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, resp)
			} else {
				if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "read_file" || string(resp.ToolCalls[1].Arguments) != `{"command":"uname -a"}` {
					t.Errorf("calls %+v", resp.ToolCalls)
				}
				if strings.Contains(resp.Content, "{") || strings.Contains(resp.Content, "tool_call") {
					t.Errorf("call text left in content: %q", resp.Content)
				}
				if len(resp.Problems) != 0 {
					t.Errorf("problems %+v", resp.Problems)
				}
			}
			checkInvariants(t, resp)

			req.Messages = answerAll(req.Messages, resp)
			if len(resp.ToolCalls) == 0 {
				req.Messages = append(req.Messages, Message{Role: RoleUser, Content: "thanks; and the kernel?"})
			}
			final, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatalf("follow-up: %v", err)
			}
			srv.CheckNoRejections(t)
			if final.Content != "Done." {
				t.Errorf("final %+v", final)
			}
			sent := srv.Requests()[1].Request
			for _, m := range sent.Messages {
				if m.ReasoningContent != nil && len(m.ToolCalls) == 0 {
					t.Errorf("reasoning_content sent back on a message without tool calls: %+v", m)
				}
			}
		})
	}
}

// TestRawQuirks covers what testenv does not script: odd shapes go-openai
// must still decode.
func TestRawQuirks(t *testing.T) {
	tests := []struct {
		name, message, finish string
		check                 func(t *testing.T, r Response)
	}{
		{name: "arguments null and number", finish: "tool_calls",
			message: `{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":null}},{"id":"b","type":"function","function":{"name":"read_file","arguments":7}}]}`,
			check: func(t *testing.T, r Response) {
				if string(r.ToolCalls[0].Arguments) != "{}" || len(r.Problems) != 1 || r.Problems[0].Kind != ProblemBadArguments || r.Problems[0].CallID != "b" {
					t.Errorf("%+v", r)
				}
			}},
		{name: "legacy function_call", finish: "function_call",
			message: `{"role":"assistant","content":"","function_call":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}`,
			check: func(t *testing.T, r Response) {
				if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID == "" || r.FinishReason != "tool_calls" {
					t.Errorf("%+v", r)
				}
			}},
		{name: "think tags in content", finish: "stop",
			message: `{"role":"assistant","content":"<think>the user wants uname</think>\n<tool_call>\n{\"name\": \"execute_command\", \"arguments\": {\"command\": \"uname\"}}\n</tool_call>"}`,
			check: func(t *testing.T, r Response) {
				if r.Reasoning != "the user wants uname" || len(r.ToolCalls) != 1 || r.Content != "" {
					t.Errorf("%+v", r)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, tt.message, tt.finish)
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL)
			resp, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Tools: []Tool{readFile, execTool}})
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, resp)
			checkInvariants(t, resp)
		})
	}
}

func TestNoToolsNoExtraction(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Text("Example: {\"name\": \"read_file\", \"arguments\": {}}"))
	c, _ := newTestClient(t, srv.URL)
	resp, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if err != nil || len(resp.ToolCalls) != 0 || !strings.Contains(resp.Content, "read_file") {
		t.Errorf("%+v %v", resp, err)
	}
}

func TestToolChoiceAndToolsOnWire(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Calls(testenv.Call("read_file", `{"path":"a"}`)))
	c, _ := newTestClient(t, srv.URL)
	req := userReq("plan")
	req.ToolChoice = "read_file"
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		ToolChoice json.RawMessage `json:"tool_choice"`
		Tools      []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if string(body.ToolChoice) != `{"type":"function","function":{"name":"read_file"}}` || len(body.Tools) != 1 || body.Tools[0].Function.Name != "read_file" || !strings.Contains(string(body.Tools[0].Function.Parameters), `"required"`) {
		t.Errorf("sent %s", srv.Requests()[0].Body)
	}
}
