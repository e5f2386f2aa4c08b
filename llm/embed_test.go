package llm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

func TestEmbeddingModelResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		name string
		env  map[string]string
		file *FileConfig
		want string
	}{
		{"openai", map[string]string{"OPENAI_API_KEY": "k"}, nil, OpenAIEmbeddingModel},
		{"ollama", nil, nil, OllamaEmbeddingModel},
		{"deepseek has none", map[string]string{"DEEPSEEK_API_KEY": "k"}, nil, ""},
		{"generic has none", map[string]string{"AGENT_BASE_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "m"}, nil, ""},
		{"file", map[string]string{"AGENT_BASE_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "m"}, &FileConfig{EmbeddingModel: "bge-m3"}, "bge-m3"},
		{"env over file", map[string]string{"AGENT_EMBEDDING_MODEL": "e5"}, &FileConfig{EmbeddingModel: "bge-m3"}, "e5"},
		{"none turns it off", map[string]string{"OPENAI_API_KEY": "k"}, &FileConfig{EmbeddingModel: "none"}, ""},
	} {
		cfg, err := Resolve(Config{}, env(c.env), c.file)
		if err != nil || cfg.EmbeddingModel != c.want {
			t.Errorf("%s: embedding model %q %v, want %q", c.name, cfg.EmbeddingModel, err, c.want)
		}
	}
	fc, err := ParseFileConfig(strings.NewReader("llm:\n  embedding_model: nomic-embed-text\n"))
	if err != nil || fc == nil || fc.EmbeddingModel != "nomic-embed-text" {
		t.Fatalf("config key: %+v %v", fc, err)
	}
}

func TestEmbed(t *testing.T) {
	srv := testenv.StartLLMServer(t).RequireKey("sk-test-key-1234")
	c := New(Config{BaseURL: srv.URL, APIKey: "sk-test-key-1234", Model: "gpt-4o-mini", EmbeddingModel: "nomic-embed-text", Provider: ProviderGeneric})
	ctx := context.Background()
	vecs, err := c.Embed(ctx, []string{"restart nginx", "disk full"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || !reflect.DeepEqual(vecs[0], testenv.Embedding("restart nginx")) || !reflect.DeepEqual(vecs[1], testenv.Embedding("disk full")) {
		t.Fatalf("vectors %d", len(vecs))
	}
	// What the API rejects is not sent.
	for _, in := range [][]string{nil, {"a", ""}, make([]string, 2049)} {
		if _, err := c.Embed(ctx, in); err == nil {
			t.Errorf("%d inputs: no error", len(in))
		}
	}
	if n := len(srv.EmbeddingRequests()); n != 1 {
		t.Fatalf("%d requests sent, want 1", n)
	}
	// A model the endpoint lacks: a 404 with a hint, not retried.
	c = New(Config{BaseURL: srv.URL, APIKey: "sk-test-key-1234", Model: "gpt-4o-mini", EmbeddingModel: "gpt-4o-mini", Provider: ProviderGeneric, MaxRetries: 3})
	_, err = c.Embed(ctx, []string{"x"})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(e.Kind, ErrNotFound) || e.Attempts != 1 || !strings.Contains(e.Hint, "llm.embedding_model") {
		t.Fatalf("unknown model: %v", err)
	}
	// A wrong key: refused, the key not in the error.
	c = New(Config{BaseURL: srv.URL, APIKey: "sk-wrong-key-9999", EmbeddingModel: "nomic-embed-text", Provider: ProviderGeneric})
	if _, err := c.Embed(ctx, []string{"x"}); err == nil || strings.Contains(err.Error(), "sk-wrong-key-9999") {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := New(Config{BaseURL: srv.URL}).Embed(ctx, []string{"x"}); !errors.Is(err, ErrNoEmbeddingModel) {
		t.Fatalf("no model: %v", err)
	}
}
