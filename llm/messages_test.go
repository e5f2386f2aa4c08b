package llm

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateHistory(t *testing.T) {
	u := Message{Role: RoleUser, Content: "go"}
	a2 := Message{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "read_file", `{}`), call("2", "read_file", `{}`)}}
	r1, r2 := ToolMessage("1", "a"), ToolMessage("2", "b")
	tests := []struct {
		name string
		msgs []Message
		want string // "" valid, else part of the error
	}{
		{"paired", []Message{u, a2, r2, r1, {Role: RoleAssistant, Content: "done"}}, ""},
		{"paired at the end", []Message{u, a2, r1, r2}, ""},
		{"call without reply at end", []Message{u, a2, r1}, `"2" has no tool reply`},
		{"call without reply before user", []Message{u, a2, r1, u}, `"2" has no tool reply`},
		{"reply without call", []Message{u, r1}, "did not call"},
		{"reply to an older call", []Message{u, a2, r1, r2, {Role: RoleAssistant, Content: "x"}, r1}, "did not call"},
		{"two replies", []Message{u, a2, r1, r1, r2}, "second tool reply"},
		{"duplicate ids", []Message{u, {Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "a", ``), call("1", "b", ``)}}}, "duplicate"},
		{"empty id", []Message{u, {Role: RoleAssistant, ToolCalls: []ToolCall{call("", "a", ``)}}}, "no id"},
		{"bad name", []Message{u, {Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "a b", ``)}}, r1}, "invalid name"},
		{"unknown role", []Message{{Role: "developer2", Content: "x"}}, "unknown role"},
	}
	for _, tt := range tests {
		err := ValidateHistory(tt.msgs)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrHistory)):
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestValidateTool(t *testing.T) {
	ok := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	for _, tt := range []struct {
		tool  Tool
		valid bool
	}{
		{Tool{Name: "read_file", Parameters: []byte(ok)}, true},
		{Tool{Name: "no-args", Parameters: []byte(`{"type":"object"}`)}, true},
		{Tool{Name: "read file", Parameters: []byte(ok)}, false},
		{Tool{Name: strings.Repeat("a", 65), Parameters: []byte(ok)}, false},
		{Tool{Name: "", Parameters: []byte(ok)}, false},
		{Tool{Name: "x"}, false},
		{Tool{Name: "x", Parameters: []byte(`{"type":"string"}`)}, false},
		{Tool{Name: "x", Parameters: []byte(`[]`)}, false},
		{Tool{Name: "x", Parameters: []byte(`{"type":"object","properties":[]}`)}, false},
	} {
		err := ValidateTool(tt.tool)
		if (err == nil) != tt.valid || err != nil && !errors.Is(err, ErrInvalidTool) {
			t.Errorf("ValidateTool(%s %s) = %v", tt.tool.Name, tt.tool.Parameters, err)
		}
	}
}

func TestAssistantMessageReasoning(t *testing.T) {
	withCalls := AssistantMessage(Response{Content: "x", Reasoning: "think", ToolCalls: []ToolCall{call("1", "read_file", `{}`)}})
	if withCalls.Reasoning != "think" {
		t.Error("reasoning dropped from a tool-call turn (DeepSeek thinking mode needs it back)")
	}
	if plain := AssistantMessage(Response{Content: "x", Reasoning: "think"}); plain.Reasoning != "" {
		t.Error("reasoning kept on a plain answer")
	}
}
