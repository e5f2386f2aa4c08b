package llm

import (
	"strings"
	"testing"
)

func TestExtractTextCalls(t *testing.T) {
	offered, names := []string{"execute_command"}, []string{"execute_command", "ps", "grep"}
	r := ExtractTextCalls(Response{Content: `{"name":"ps","arguments":{}}`, FinishReason: FinishStop}, offered, names)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "ps" || r.ToolCalls[0].ID == "" || string(r.ToolCalls[0].Arguments) != "{}" {
		t.Fatalf("calls %+v", r.ToolCalls)
	}
	if len(r.Problems) != 1 || r.Problems[0].Kind != ProblemUnknownTool || r.Problems[0].CallID != r.ToolCalls[0].ID {
		t.Errorf("problems %+v: want the unoffered tool flagged for the caller", r.Problems)
	}
	if r.FinishReason != FinishToolCalls || r.Content != "" {
		t.Errorf("finish %q content %q", r.FinishReason, r.Content)
	}
	// two calls get distinct ids
	r = ExtractTextCalls(Response{Content: `first {"name":"ps","arguments":{}} then {"name":"grep","arguments":"{\"pattern\":\"x\"}"}`}, offered, names)
	if len(r.ToolCalls) != 2 || r.ToolCalls[0].ID == r.ToolCalls[1].ID || string(r.ToolCalls[1].Arguments) != `{"pattern":"x"}` {
		t.Errorf("calls %+v", r.ToolCalls)
	}
	// left alone: JSON that is no call, a name nobody has, a reply with calls
	for _, text := range []string{`{"status":"ok","count":3}`, `{"name":"rm_everything","arguments":{}}`, `All done.`, `{"name":"ps"}`, `{"name":`} {
		r := ExtractTextCalls(Response{Content: text}, offered, names)
		if len(r.ToolCalls) != 0 || r.Content != text {
			t.Errorf("%q: %+v", text, r)
		}
	}
	with := Response{Content: `{"name":"ps","arguments":{}}`, ToolCalls: []ToolCall{{ID: "a", Name: "execute_command", Arguments: []byte("{}")}}}
	if r := ExtractTextCalls(with, offered, names); len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "a" {
		t.Errorf("a reply with calls changed: %+v", r)
	}
}

func FuzzExtractTextCalls(f *testing.F) {
	f.Add(`{"name":"ps","arguments":{}}`)
	f.Add(`text {"name":"grep","arguments":"{\"pattern\":1}"} [{"name":"ps","arguments":null}]`)
	f.Add("```json\n{\"name\":\"ps\",\"arguments\":{}}\n```")
	f.Fuzz(func(t *testing.T, text string) {
		r := ExtractTextCalls(Response{Content: text}, []string{"execute_command"}, []string{"ps", "grep"})
		seen := map[string]bool{}
		for _, c := range r.ToolCalls {
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("bad or duplicate id in %+v", r.ToolCalls)
			}
			seen[c.ID] = true
			if !strings.HasPrefix(string(c.Arguments), "{") {
				t.Fatalf("arguments %q", c.Arguments)
			}
		}
	})
}
