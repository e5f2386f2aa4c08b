package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ErrNoEmbeddingModel: Config.EmbeddingModel is empty.
var ErrNoEmbeddingModel = errors.New("no embeddings model configured (llm.embedding_model)")

// maxEmbedInputs is the most inputs one embeddings request may carry
// (OpenAI's limit).
const maxEmbedInputs = 2048

// EmbeddingModel is the model Embed uses, "" when none is configured.
func (c *Client) EmbeddingModel() string { return c.cfg.EmbeddingModel }

// Embed returns one vector per text from the endpoint's OpenAI-compatible
// embeddings API (POST /embeddings) with Config.EmbeddingModel, retrying
// as Chat does. Texts must be non-empty and at most 2048; what a real API
// rejects is refused before sending. The error is an *Error (no secret in
// it), ErrNoEmbeddingModel, or ctx's error. The exchange hook sees the
// call as Endpoint "embeddings", with the body exactly as sent.
func (c *Client) Embed(ctx context.Context, texts []string) (vecs [][]float32, err error) {
	if c.onExchange != nil && c.cfg.EmbeddingModel != "" {
		var sent []byte // the body as sent, for the exchange hook
		ctx = context.WithValue(ctx, sentKey{}, &sent)
		defer func(start time.Time) { c.observeEmbed(sent, len(vecs), err, start) }(time.Now())
	}
	if c.cfg.EmbeddingModel == "" {
		return nil, ErrNoEmbeddingModel
	}
	switch {
	case len(texts) == 0:
		return nil, errors.New("embed: no input")
	case len(texts) > maxEmbedInputs:
		return nil, fmt.Errorf("embed: %d inputs, more than the API's %d", len(texts), maxEmbedInputs)
	}
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("embed: input %d is empty", i)
		}
	}
	req := openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(c.cfg.EmbeddingModel)}
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		resp, err := c.oa.CreateEmbeddings(actx, req)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			return vectors(resp, len(texts))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e, retry := c.classify(err, timedOut)
		if e.Kind == ErrNotFound {
			e.Hint = fmt.Sprintf("the endpoint has no embeddings model %q: set llm.embedding_model (or none)", c.cfg.EmbeddingModel)
			if c.cfg.Provider == ProviderOllama {
				e.Hint = fmt.Sprintf("run `ollama pull %s`, or set llm.embedding_model", c.cfg.EmbeddingModel)
			}
		}
		if !retry || attempt >= c.cfg.MaxRetries {
			e.Attempts = attempt + 1
			return nil, e
		}
		if err := c.sleep(ctx, backoff(attempt)); err != nil {
			return nil, err
		}
	}
}

func vectors(resp openai.EmbeddingResponse, n int) ([][]float32, error) {
	if len(resp.Data) != n {
		return nil, &Error{Kind: ErrBadResponse, Detail: fmt.Sprintf("%d embeddings for %d inputs", len(resp.Data), n)}
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, &Error{Kind: ErrBadResponse, Detail: fmt.Sprintf("embedding index %d out of place", d.Index)}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// Embedder is the client as semantic_search's embeddings model.
type Embedder struct{ c *Client }

// Model is the embeddings model.
func (e Embedder) Model() string { return e.c.cfg.EmbeddingModel }

// Embed is Client.Embed.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.c.Embed(ctx, texts)
}

// Embedder returns the client as an embeddings model, or ok false when it
// has none configured.
func (c *Client) Embedder() (e Embedder, ok bool) {
	return Embedder{c}, c.cfg.EmbeddingModel != ""
}
