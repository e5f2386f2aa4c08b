package testenv

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestEmbeddingsRejects: the server refuses what OpenAI's embeddings API
// refuses, with its status and wording.
func TestEmbeddingsRejects(t *testing.T) {
	s := StartLLMServer(t)
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"model":"nomic-embed-text"}`, 400, "'input' is a required property"},
		{`{"model":"nomic-embed-text","input":[]}`, 400, "'$.input' is invalid"},
		{`{"model":"nomic-embed-text","input":""}`, 400, "'$.input' is invalid"},
		{`{"model":"nomic-embed-text","input":["a",""]}`, 400, "'$.input' is invalid"},
		{`{"input":["a"]}`, 400, "you must provide a model parameter"},
		{`{"model":"gpt-4o-mini","input":["a"]}`, 404, "does not exist"},
		{`{"model":"nomic-embed-text","input":["a"],"encoding_format":"int8"}`, 400, "Supported values are"},
		{`{"model":"nomic-embed-text","input":["` + strings.Repeat("x", 40000) + `"]}`, 400, "maximum context length is 8192 tokens"},
		{`not json`, 400, "could not parse the JSON body"},
		{`{"model":"nomic-embed-text","input":"one"}`, 200, `"embedding":[`},
	} {
		resp, err := http.Post(s.URL+"/embeddings", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		io.Copy(&b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(b.String(), c.want) {
			t.Errorf("%.60s: %d %.200s, want %d %q", c.body, resp.StatusCode, b.String(), c.status, c.want)
		}
	}
	if got := s.EmbeddedInputs(); got != 1 {
		t.Errorf("%d inputs embedded, want 1", got)
	}
}
