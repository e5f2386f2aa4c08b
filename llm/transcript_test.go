package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestExchangeHook: every Chat call reaches the hook once, in order, with
// the request as given and the normalized reply, or the error; the key
// never appears, even where a message or the server echoed it.
func TestExchangeHook(t *testing.T) {
	srv := testenv.StartLLMServer(t,
		testenv.Calls(testenv.Call("read_file", `{"path":"/etc/`+testKey+`"}`)),
		testenv.ErrorReply(http.StatusBadRequest, "bad key "+testKey),
	)
	var got []Exchange
	c, _ := newTestClient(t, srv.URL, WithExchangeHook(func(x Exchange) { got = append(got, x) }))
	req := userReq("my key is " + testKey)
	resp, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	history := append(req.Messages, AssistantMessage(resp), ToolMessage(resp.ToolCalls[0].ID, "content"))
	_, err2 := c.Chat(context.Background(), Request{Messages: history, Tools: req.Tools})
	if err2 == nil {
		t.Fatal("second call: want the scripted 400")
	}
	if len(got) != 2 {
		t.Fatalf("hook called %d times, want 2", len(got))
	}
	if got[0].Seq != 1 || got[1].Seq != 2 || got[0].Model != "gpt-4o-mini" {
		t.Errorf("seq/model: %d %d %q", got[0].Seq, got[1].Seq, got[0].Model)
	}
	if n := len(got[0].Request.Messages); n != 2 || got[0].Request.Messages[1].Content != "my key is sk-…wxyz" {
		t.Errorf("first request: %d messages, user %q", n, got[0].Request.Messages[1].Content)
	}
	if len(got[0].Request.Tools) != 1 || got[0].Response.ToolCalls[0].Name != "read_file" {
		t.Errorf("first exchange: tools %v, reply %+v", got[0].Request.Tools, got[0].Response)
	}
	if len(got[1].Request.Messages) != 4 || got[1].Err == nil {
		t.Errorf("second exchange: %d messages, err %v", len(got[1].Request.Messages), got[1].Err)
	}
	var e *Error
	if !errors.As(got[1].Err, &e) || e.Status != http.StatusBadRequest {
		t.Errorf("the hook's error lost its type: %#v", got[1].Err)
	}
	// The caller's own slices were not rewritten.
	if req.Messages[1].Content != "my key is "+testKey {
		t.Errorf("request modified: %q", req.Messages[1].Content)
	}
	noKey(t, fmt.Sprintf("%+v %v", got, got[1].Err))
	// json.RawMessage prints as bytes above: check the arguments as text.
	if a := string(got[0].Response.ToolCalls[0].Arguments); a != `{"path":"/etc/sk-…wxyz"}` {
		t.Errorf("reply arguments: %s", a)
	}
	noKey(t, string(got[1].Request.Messages[2].ToolCalls[0].Arguments))
}

// TestExchangeHookEmbeddings: an Embed call reaches the hook as endpoint
// "embeddings" with the body exactly as sent (the texts), the number of
// vectors, one sequence with the Chat calls; a failed one with its error.
func TestExchangeHookEmbeddings(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Text("done"))
	var got []Exchange
	c, _ := newTestClient(t, srv.URL, WithExchangeHook(func(x Exchange) { got = append(got, x) }))
	c.cfg.EmbeddingModel = "text-embedding-3-small"
	if _, err := c.Chat(context.Background(), userReq("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"first passage", "second " + testKey}); err != nil {
		t.Fatal(err)
	}
	c.cfg.EmbeddingModel = "no-such-embedder"
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("an unknown embeddings model: want the server's 404")
	}
	if len(got) != 3 {
		t.Fatalf("hook called %d times, want 3", len(got))
	}
	x := got[1]
	if x.Seq != 2 || x.Endpoint != "embeddings" || x.Model != "text-embedding-3-small" || x.Embeddings != 2 || x.Err != nil {
		t.Errorf("embeddings exchange: %+v", x)
	}
	recs := srv.EmbeddingRequests()
	if len(recs) != 2 || len(recs[0].Inputs) != 2 {
		t.Fatalf("server saw %+v", recs)
	}
	var sent struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.Unmarshal(x.Body, &sent); err != nil || sent.Model != "text-embedding-3-small" ||
		len(sent.Input) != 2 || sent.Input[0] != recs[0].Inputs[0] || sent.Input[1] != "second sk-…wxyz" {
		t.Errorf("body %s (%v), server got %q", x.Body, err, recs[0].Inputs)
	}
	if got[0].Endpoint != "chat" || got[2].Endpoint != "embeddings" || got[2].Err == nil || got[2].Embeddings != 0 {
		t.Errorf("chat %+v / failed embeddings %+v", got[0], got[2])
	}
	noKey(t, fmt.Sprintf("%+v %s", got, got[1].Body))
}
