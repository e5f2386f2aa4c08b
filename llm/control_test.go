package llm

import (
	"context"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// Calls to control tools (Request.Control: submit_plan, phase_done) do not
// count toward MaxToolCalls, wherever they stand; every other call does,
// also when calls are written in the text.
func TestControlCallsNotCounted(t *testing.T) {
	done := Tool{Name: "phase_done", Description: "Close the phase.", Parameters: []byte(`{"type":"object","properties":{"summary":{"type":"string"}}}`)}
	ex := testenv.Call("execute_command", `{"command":"true"}`)
	pd := testenv.Call("phase_done", `{"summary":"s"}`)
	for _, tc := range []struct {
		name    string
		reply   testenv.Reply
		control []string
		tooMany []int // indexes of the calls refused as too many
	}{
		{"three and done", testenv.Calls(ex, ex, ex, pd), []string{"phase_done"}, nil},
		{"done first", testenv.Calls(pd, ex, ex, ex), []string{"phase_done"}, nil},
		{"four and done", testenv.Calls(ex, pd, ex, ex, ex), []string{"phase_done"}, []int{4}},
		{"not control", testenv.Calls(ex, ex, ex, pd), nil, []int{3}},
		{"in the text", testenv.Reply{ToolCalls: []testenv.ToolCall{ex, ex, ex, pd}, Quirks: testenv.QuirkCallsInFencedJSON}, []string{"phase_done"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testenv.StartLLMServer(t, tc.reply)
			c := New(Config{BaseURL: srv.URL, Model: "gpt-4o-mini", APIKey: "k"})
			resp, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}},
				Tools: []Tool{execTool, done}, ToolChoice: "required", Control: tc.control})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for i, call := range resp.ToolCalls {
				if p, bad := resp.ProblemFor(call.ID); bad && p.Kind == ProblemTooManyCalls {
					got = append(got, i)
				}
			}
			if len(got) != len(tc.tooMany) || len(got) > 0 && got[0] != tc.tooMany[0] {
				t.Errorf("too many: calls %v, want %v (%+v)", got, tc.tooMany, resp.Problems)
			}
			srv.CheckNoRejections(t)
		})
	}
	// ExtractTextCalls counts the same way
	r := ExtractTextCalls(Response{Content: `{"name":"execute_command","arguments":{}} {"name":"execute_command","arguments":{}} ` +
		`{"name":"execute_command","arguments":{}} {"name":"phase_done","arguments":{"summary":"s"}}`},
		[]string{"execute_command", "phase_done"}, nil, "phase_done")
	if len(r.ToolCalls) != 4 || len(r.Problems) != 0 {
		t.Errorf("ExtractTextCalls: %d calls, problems %+v", len(r.ToolCalls), r.Problems)
	}
}
