package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

var knownTools = map[string]bool{"execute_command": true, "read_file": true, "write_file": true}

func call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name        string
		in          Response
		wantContent string
		wantCalls   []ToolCall // ids checked when non-empty
		wantFinish  string
		wantKinds   []string
	}{
		{name: "plain text", in: Response{Content: "all done", FinishReason: "stop"}, wantContent: "all done", wantFinish: "stop"},
		{name: "native call", in: Response{ToolCalls: []ToolCall{call("a", "read_file", `{"path":"/etc/hosts"}`)}, FinishReason: "tool_calls"},
			wantCalls: []ToolCall{call("a", "read_file", `{"path":"/etc/hosts"}`)}, wantFinish: "tool_calls"},
		{name: "fenced json", in: Response{Content: "I will list.\n```json\n{\"name\": \"execute_command\", \"arguments\": {\"command\": \"ls\"}}\n```\n", FinishReason: "stop"},
			wantContent: "I will list.", wantCalls: []ToolCall{call("call_1", "execute_command", `{"command":"ls"}`)}, wantFinish: "tool_calls"},
		{name: "fenced array", in: Response{Content: "```\n[{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}},{\"name\":\"read_file\",\"arguments\":{\"path\":\"b\"}}]\n```"},
			wantCalls: []ToolCall{call("call_1", "read_file", `{"path":"a"}`), call("call_2", "read_file", `{"path":"b"}`)}},
		{name: "tool_call tags", in: Response{Content: "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}\n</tool_call>\n<tool_call>{\"name\": \"execute_command\", \"arguments\": \"{\\\"command\\\":\\\"id\\\"}\"}</tool_call>"},
			wantCalls: []ToolCall{call("", "read_file", `{"path":"x"}`), call("", "execute_command", `{"command":"id"}`)}},
		{name: "unclosed tag", in: Response{Content: "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}"},
			wantCalls: []ToolCall{call("", "read_file", `{"path":"x"}`)}},
		{name: "bare objects", in: Response{Content: "Running:\n{\"name\": \"execute_command\", \"arguments\": {\"command\": \"df -h\"}}\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"/x\"}}"},
			wantContent: "Running:", wantCalls: []ToolCall{call("", "execute_command", `{"command":"df -h"}`), call("", "read_file", `{"path":"/x"}`)}},
		{name: "bare json that is data stays", in: Response{Content: `The config is {"name": "nginx", "arguments": ["-g"]} and {"a": {"b": 1}}.`},
			wantContent: `The config is {"name": "nginx", "arguments": ["-g"]} and {"a": {"b": 1}}.`},
		{name: "openai shape in text", in: Response{Content: `{"id":"x1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"p\"}"}}`},
			wantCalls: []ToolCall{call("x1", "read_file", `{"path":"p"}`)}},
		{name: "arguments object", in: Response{ToolCalls: []ToolCall{call("a", "read_file", ` { "path" : "x" } `)}},
			wantCalls: []ToolCall{call("a", "read_file", `{"path":"x"}`)}},
		{name: "arguments empty and null", in: Response{ToolCalls: []ToolCall{call("a", "read_file", ``), call("b", "read_file", `null`), call("c", "read_file", `""`)}},
			wantCalls: []ToolCall{call("a", "read_file", `{}`), call("b", "read_file", `{}`), call("c", "read_file", `{}`)}},
		{name: "arguments double encoded", in: Response{ToolCalls: []ToolCall{call("a", "read_file", `"{\"path\":\"x\"}"`)}},
			wantCalls: []ToolCall{call("a", "read_file", `{"path":"x"}`)}},
		{name: "arguments invalid", in: Response{ToolCalls: []ToolCall{call("a", "read_file", `{"path":`)}},
			wantCalls: []ToolCall{call("a", "read_file", `{}`)}, wantKinds: []string{ProblemBadArguments}},
		{name: "arguments array", in: Response{ToolCalls: []ToolCall{call("a", "read_file", `[1]`)}},
			wantCalls: []ToolCall{call("a", "read_file", `{}`)}, wantKinds: []string{ProblemBadArguments}},
		{name: "missing ids", in: Response{ToolCalls: []ToolCall{call("", "read_file", `{}`), call("", "read_file", `{}`)}},
			wantCalls: []ToolCall{call("call_1", "read_file", `{}`), call("call_2", "read_file", `{}`)}},
		{name: "duplicate ids avoid existing", in: Response{ToolCalls: []ToolCall{call("call_1", "read_file", `{}`), call("call_1", "read_file", `{}`)}},
			wantCalls: []ToolCall{call("call_1", "read_file", `{}`), call("call_2", "read_file", `{}`)}},
		{name: "stop with tool calls", in: Response{ToolCalls: []ToolCall{call("a", "read_file", `{}`)}, FinishReason: "stop"}, wantFinish: "tool_calls"},
		{name: "tool_calls without calls", in: Response{Content: "done", FinishReason: "tool_calls"}, wantFinish: "stop"},
		{name: "more than three", in: Response{ToolCalls: []ToolCall{call("a", "read_file", `{}`), call("b", "read_file", `{}`), call("c", "read_file", `{}`), call("d", "read_file", `{}`), call("e", "read_file", `{}`)}},
			wantKinds: []string{ProblemTooManyCalls, ProblemTooManyCalls}},
		{name: "unknown tool", in: Response{ToolCalls: []ToolCall{call("a", "run shell!", `{}`), call("b", "read_file", `{}`)}},
			wantCalls: []ToolCall{call("a", "run_shell_", `{}`), call("b", "read_file", `{}`)}, wantKinds: []string{ProblemUnknownTool}},
		{name: "functions. prefix", in: Response{ToolCalls: []ToolCall{call("a", " functions.read_file ", `{}`)}},
			wantCalls: []ToolCall{call("a", "read_file", `{}`)}},
		{name: "think block", in: Response{Content: "<think>check disk</think>\nDisk is fine."}, wantContent: "Disk is fine."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := Normalize(tt.in, knownTools)
			if tt.wantContent != "" || len(tt.wantCalls) > 0 {
				if got.Content != tt.wantContent {
					t.Errorf("Content = %q, want %q", got.Content, tt.wantContent)
				}
			}
			if tt.wantCalls != nil {
				if len(got.ToolCalls) != len(tt.wantCalls) {
					t.Fatalf("ToolCalls = %+v, want %d", got.ToolCalls, len(tt.wantCalls))
				}
				for i, w := range tt.wantCalls {
					g := got.ToolCalls[i]
					if g.Name != w.Name || string(g.Arguments) != string(w.Arguments) || (w.ID != "" && g.ID != w.ID) {
						t.Errorf("call %d = %s %s %s, want %s %s %s", i, g.ID, g.Name, g.Arguments, w.ID, w.Name, w.Arguments)
					}
				}
			}
			if tt.wantFinish != "" && got.FinishReason != tt.wantFinish {
				t.Errorf("FinishReason = %q, want %q", got.FinishReason, tt.wantFinish)
			}
			var kinds []string
			for _, p := range problems {
				kinds = append(kinds, p.Kind)
				if _, ok := got.ProblemFor(p.CallID); !ok {
					t.Errorf("problem %+v not in Response.Problems", p)
				}
				if msg := ToolError(p); !strings.HasPrefix(msg, "error: ") {
					t.Errorf("ToolError = %q", msg)
				}
			}
			if strings.Join(kinds, ",") != strings.Join(tt.wantKinds, ",") {
				t.Errorf("problems = %v, want %v", kinds, tt.wantKinds)
			}
			checkInvariants(t, got)
		})
	}
}

func TestNormalizeThinkAndReasoning(t *testing.T) {
	got, _ := Normalize(Response{Content: "<think>\nls first\n</think>\nok"}, nil)
	if got.Reasoning != "ls first" || got.Content != "ok" {
		t.Errorf("got %+v", got)
	}
	got, _ = Normalize(Response{Content: "ok", Reasoning: "r"}, nil)
	if got.Reasoning != "r" {
		t.Errorf("reasoning lost: %+v", got)
	}
}

func TestToolErrorTexts(t *testing.T) {
	_, ps := Normalize(Response{ToolCalls: []ToolCall{call("a", "sudo_it", `{}`)}}, knownTools)
	msg := ToolError(ps[0])
	for _, want := range []string{`"sudo_it"`, "execute_command, read_file, write_file"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if msg := ToolError(Problem{Kind: ProblemTooManyCalls}); !strings.Contains(msg, "At most 3") {
		t.Error(msg)
	}
	if msg := ToolError(Problem{Kind: ProblemBadArguments, Name: "read_file", Detail: "got 7"}); !strings.Contains(msg, "read_file") || !strings.Contains(msg, "got 7") {
		t.Error(msg)
	}
}

// checkInvariants: ids unique and non-empty, arguments JSON objects, names
// API-valid, and the history built from the reply validates once every call
// has its reply.
func checkInvariants(t testing.TB, r Response) {
	t.Helper()
	seen := map[string]bool{}
	hist := []Message{{Role: RoleUser, Content: "task"}, AssistantMessage(r)}
	for _, tc := range r.ToolCalls {
		if tc.ID == "" || seen[tc.ID] {
			t.Fatalf("empty or duplicate id %q in %+v", tc.ID, r.ToolCalls)
		}
		seen[tc.ID] = true
		var obj map[string]any
		if err := json.Unmarshal(tc.Arguments, &obj); err != nil || obj == nil {
			t.Fatalf("arguments %q of %s are not a JSON object", tc.Arguments, tc.ID)
		}
		hist = append(hist, ToolMessage(tc.ID, "ok"))
	}
	if err := ValidateHistory(hist); err != nil {
		t.Fatalf("history of a normalized reply: %v", err)
	}
	if (len(r.ToolCalls) > 0) != (r.FinishReason == FinishToolCalls) {
		t.Fatalf("finish %q with %d calls", r.FinishReason, len(r.ToolCalls))
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add("```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"x\"}}\n```", "", "id", "stop")
	f.Add("<tool_call>{\"name\":\"x\",\"arguments\":\"\"}</tool_call>", `{"a":1}`, "", "")
	f.Add(`{"name":"execute_command","arguments":{}} {"name":"read_file","arguments":"{}"}`, `"{\"a\":1}"`, "call_1", "tool_calls")
	f.Add("<think>x</think>{{{", `[1,2`, "call_2", "length")
	f.Fuzz(func(t *testing.T, content, args, id, finish string) {
		in := Response{Content: content, FinishReason: finish}
		if args != "" || id != "" {
			in.ToolCalls = []ToolCall{call(id, "read_file", args), call(id, content, args), call("", "x", args), call(id, "write_file", "")}
		}
		for _, known := range []map[string]bool{nil, knownTools} {
			got, _ := Normalize(in, known)
			checkInvariants(t, got)
			got2, _ := Normalize(Response{Content: content}, known)
			checkInvariants(t, got2)
		}
	})
}
