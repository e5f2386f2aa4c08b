package testenv

import (
	"context"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// Request pieces for the validation table.
const (
	vUser      = `{"role":"user","content":"go"}`
	vAsstCalls = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"ps","arguments":"{}"}}]}`
	vTool1     = `{"role":"tool","tool_call_id":"call_1","content":"out1"}`
	vTool2     = `{"role":"tool","tool_call_id":"call_2","content":"out2"}`
)

func msgs(ms ...string) string {
	return `{"model":"m","messages":[` + strings.Join(ms, ",") + `]}`
}

func withTool(params string) string {
	return `{"model":"m","messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":"execute_command","parameters":` + params + `}}]}`
}

func TestLLMServerValidation(t *testing.T) {
	tests := []struct {
		name, body  string
		msg         string // exact message, or prefix when it ends with "…"
		param, code any    // nil means JSON null
	}{
		{"not json", `{"model":`, "We could not parse the JSON body of your request.…", nil, nil},
		{"missing model", `{"messages":[` + vUser + `]}`, "you must provide a model parameter", nil, nil},
		{"empty messages", `{"model":"m","messages":[]}`, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array"},
		{"stream", `{"model":"m","stream":true,"messages":[` + vUser + `]}`, "streaming not supported by the scripted server", "stream", "unsupported_value"},
		{"unknown role", msgs(`{"role":"bot","content":"x"}`), "Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", "messages[0].role", "invalid_value"},
		{"tool without preceding call", msgs(vUser, vTool1), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "messages.[1].role", nil},
		{"tool id mismatch", msgs(vUser, vAsstCalls, vTool1, `{"role":"tool","tool_call_id":"call_9","content":"x"}`), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "messages.[3].role", nil},
		{"tool answered twice", msgs(vUser, vAsstCalls, vTool1, vTool2, vTool2), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "messages.[4].role", nil},
		{"call unanswered at end", msgs(vUser, vAsstCalls, vTool1), "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2", "messages.[1].role", nil},
		{"call unanswered before user", msgs(vUser, vAsstCalls, vUser, vTool1, vTool2), "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1, call_2", "messages.[1].role", nil},
		{"tool content object", msgs(vUser, vAsstCalls, `{"role":"tool","tool_call_id":"call_1","content":{"out":1}}`, vTool2), "Invalid type for 'messages[2].content': expected a string, but got an object instead.", "messages[2].content", "invalid_type"},
		{"tool content array", msgs(vUser, vAsstCalls, `{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"x"}]}`, vTool2), "Invalid type for 'messages[2].content': expected a string, but got an array instead.", "messages[2].content", "invalid_type"},
		{"tool content missing", msgs(vUser, vAsstCalls, `{"role":"tool","tool_call_id":"call_1"}`, vTool2), "Missing required parameter: 'messages[2].content'.", "messages[2].content", "missing_required_parameter"},
		{"tool content null", msgs(vUser, vAsstCalls, `{"role":"tool","tool_call_id":"call_1","content":null}`, vTool2), "Invalid type for 'messages[2].content': expected a string, but got null instead.", "messages[2].content", "invalid_type"},
		{"tool_call_id missing", msgs(vUser, vAsstCalls, `{"role":"tool","content":"x"}`, vTool2), "Missing required parameter: 'messages[2].tool_call_id'.", "messages[2].tool_call_id", "missing_required_parameter"},
		{"user content object", msgs(`{"role":"user","content":{"a":1}}`), "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an object instead.", "messages[0].content", "invalid_type"},
		{"history call without id", msgs(vUser, `{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"ps","arguments":"{}"}}]}`), "Missing required parameter: 'messages[1].tool_calls[0].id'.", "messages[1].tool_calls[0].id", "missing_required_parameter"},
		{"history arguments object", msgs(vUser, `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"ps","arguments":{}}}]}`, `{"role":"tool","tool_call_id":"c","content":""}`), "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.", "messages[1].tool_calls[0].function.arguments", "invalid_type"},
		{"history bad call name", msgs(vUser, `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"run cmd","arguments":"{}"}}]}`, `{"role":"tool","tool_call_id":"c","content":""}`), "Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", "messages[1].tool_calls[0].function.name", "invalid_value"},
		{"tool name pattern", `{"model":"m","messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":"get_/whoami"}}]}`, "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", "tools[0].function.name", "invalid_value"},
		{"tool name too long", `{"model":"m","messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `"}}]}`, "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.", "tools[0].function.name", "string_above_max_length"},
		{"tool name empty", `{"model":"m","messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":""}}]}`, "Invalid 'tools[0].function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.", "tools[0].function.name", "empty_string"},
		{"schema type string", withTool(`{"type":"string"}`), `Invalid schema for function 'execute_command': schema must be a JSON Schema of 'type: "object"', got 'type: "string"'.`, "tools[0].function.parameters", "invalid_function_parameters"},
		{"schema without type", withTool(`{"properties":{}}`), `Invalid schema for function 'execute_command': schema must be a JSON Schema of 'type: "object"', got 'type: "None"'.`, "tools[0].function.parameters", "invalid_function_parameters"},
		{"schema not an object", withTool(`[]`), "Invalid schema for function 'execute_command': [] is not of type 'object', 'boolean'.", "tools[0].function.parameters", "invalid_function_parameters"},
		{"tool_choice without tools", `{"model":"m","tool_choice":"required","messages":[` + vUser + `]}`, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", "tool_choice", nil},
		{"tool_choice bad mode", `{"model":"m","tool_choice":"any","messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":"ps"}}]}`, "Invalid value: 'any'. Supported values are: 'none', 'auto', and 'required'.", "tool_choice", "invalid_value"},
		{"tool_choice names another tool", `{"model":"m","tool_choice":{"type":"function","function":{"name":"submit_plan"}},"messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":"ps"}}]}`, "Invalid value for 'tool_choice': function 'submit_plan' is not among 'tools'.", "tool_choice", "invalid_value"},
		{"schema array without items", withTool(`{"type":"object","properties":{"args":{"type":"array"}}}`), "Invalid schema for function 'execute_command': In context=('properties', 'args'), array schema missing items.", "tools[0].function.parameters", "invalid_function_parameters"},
	}
	s := StartLLMServer(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.Rejections())
			status, _, body := postChat(t, s, tc.body)
			e, _ := body["error"].(map[string]any)
			if status != 400 || e == nil {
				t.Fatalf("status %d, body %v", status, body)
			}
			msg, _ := e["message"].(string)
			if want, prefix := strings.CutSuffix(tc.msg, "…"); prefix && !strings.HasPrefix(msg, want) || !prefix && msg != tc.msg {
				t.Errorf("message:\n got %s\nwant %s", msg, tc.msg)
			}
			if e["type"] != "invalid_request_error" || e["param"] != tc.param || e["code"] != tc.code {
				t.Errorf("type/param/code = %v/%v/%v, want invalid_request_error/%v/%v", e["type"], e["param"], e["code"], tc.param, tc.code)
			}
			for _, k := range []string{"param", "code"} {
				if _, ok := e[k]; !ok {
					t.Errorf("%s absent; real APIs send null", k)
				}
			}
			if len(s.Rejections()) != before+1 {
				t.Error("rejection not recorded")
			}
		})
	}
	if s.Remaining() != 0 || len(s.Requests()) != len(tests) {
		t.Fatalf("requests = %d", len(s.Requests()))
	}
}

func TestLLMServerValidAccepted(t *testing.T) {
	s := StartLLMServer(t, Text("a"), Text("b"))
	for _, body := range []string{
		msgs(`{"role":"system","content":"s"}`, vUser, vAsstCalls, vTool2, vTool1, `{"role":"assistant","content":"done"}`, vUser),
		`{"model":"m","messages":[` + vUser + `],"tools":[{"type":"function","function":{"name":"ps"}},` +
			`{"type":"function","function":{"name":"grep","parameters":{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}}}}}]}`,
	} {
		if status, _, resp := postChat(t, s, body); status != 200 {
			t.Fatalf("status %d: %v\nrequest %s", status, resp, body)
		}
	}
	s.CheckNoRejections(t)
}

func TestLLMServerDeepSeekDialects(t *testing.T) {
	withReasoning := `{"role":"assistant","content":"x","reasoning_content":"r"}`
	callsNoReasoning := vAsstCalls
	callsReasoning := strings.Replace(vAsstCalls, `"content":null`, `"content":null,"reasoning_content":"r"`, 1)
	tests := []struct {
		name    string
		dialect Dialect
		body    string
		msg     string // "" means accepted
	}{
		{"deepseek tool wording", DialectDeepSeek, msgs(vUser, vTool1), "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"},
		{"deepseek unanswered wording", DialectDeepSeek, msgs(vUser, vAsstCalls, vTool1), "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)"},
		{"deepseek-chat ignores reasoning", DialectDeepSeek, msgs(vUser, withReasoning, vUser), ""},
		{"reasoner rejects reasoning_content", DialectDeepSeekReasoner, msgs(vUser, withReasoning, vUser), "The reasoning_content field is not allowed in input messages (messages[1]); remove it before sending the conversation back to deepseek-reasoner."},
		{"reasoner accepts plain history", DialectDeepSeekReasoner, msgs(vUser, `{"role":"assistant","content":"x"}`, vUser), ""},
		{"thinking requires reasoning on tool turns", DialectDeepSeekThinking, msgs(vUser, callsNoReasoning, vTool1, vTool2), "The `reasoning_content` in the thinking mode must be passed back to the API."},
		{"thinking accepts it passed back", DialectDeepSeekThinking, msgs(vUser, callsReasoning, vTool1, vTool2), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := StartLLMServer(t, Text("ok")).SetDialect(tc.dialect)
			status, _, body := postChat(t, s, tc.body)
			if tc.msg == "" {
				if status != 200 {
					t.Fatalf("status %d: %v", status, body)
				}
				return
			}
			e, _ := body["error"].(map[string]any)
			if status != 400 || e == nil || e["message"] != tc.msg || e["param"] != nil || e["code"] != "invalid_request_error" {
				t.Fatalf("status %d, error %v", status, e)
			}
		})
	}
}

// A go-openai client sees the rejection as an *openai.APIError.
func TestLLMServerRejectionThroughGoOpenAI(t *testing.T) {
	s := StartLLMServer(t, Text("unused"))
	_, err := llmClient(s, "k").CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m",
		Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "x"},
			{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "call_a", Type: "function", Function: openai.FunctionCall{Name: "ps", Arguments: "{}"}}}},
		},
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Type != "invalid_request_error" ||
		!strings.Contains(apiErr.Message, "did not have response messages: call_a") || apiErr.Param == nil || *apiErr.Param != "messages.[1].role" {
		t.Fatalf("err = %#v", err)
	}
	if len(s.Rejections()) != 1 || s.Remaining() != 1 {
		t.Fatal("rejection not recorded, or it used the script")
	}
}
