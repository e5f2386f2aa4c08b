package testenv

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"unicode"
)

// EmbeddingDims is the length of the vectors the scripted server returns.
const EmbeddingDims = 256

// Embedding limits of OpenAI's API that the server enforces.
const (
	maxEmbeddingInputs = 2048
	maxEmbeddingTokens = 8192 // per input; a token is counted as 4 bytes
)

// DefaultEmbeddingModels are the embedding models served until
// SetEmbeddingModels: OpenAI's default and the one Ollama serves.
var DefaultEmbeddingModels = []string{"text-embedding-3-small", "nomic-embed-text"}

// EmbeddingRecord is one request to /v1/embeddings.
type EmbeddingRecord struct {
	Model  string
	Inputs []string
	Status int
	Error  *APIError
}

// SetEmbeddingModels replaces the models /v1/embeddings serves; any other
// model (a chat model included) gets OpenAI's 404 model_not_found. None:
// an endpoint without embeddings.
func (s *LLMServer) SetEmbeddingModels(names ...string) *LLMServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedModels = slices.Clone(names)
	return s
}

// EmbeddingRequests returns every request to /v1/embeddings, in order.
func (s *LLMServer) EmbeddingRequests() []EmbeddingRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.embeds)
}

// EmbeddedInputs counts the inputs of the successful embedding requests.
func (s *LLMServer) EmbeddedInputs() int {
	n := 0
	for _, r := range s.EmbeddingRequests() {
		if r.Status == http.StatusOK {
			n += len(r.Inputs)
		}
	}
	return n
}

// handleEmbeddings answers POST /v1/embeddings as OpenAI does, with
// Embedding's deterministic vectors, and rejects what OpenAI rejects: no
// or empty input, an empty string, too many inputs, an input over the
// context length, an unknown model or encoding format.
func (s *LLMServer) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	rec := EmbeddingRecord{}
	reply := func(status int, e *APIError, v any) {
		rec.Status, rec.Error = status, e
		s.mu.Lock()
		s.embeds = append(s.embeds, rec)
		s.mu.Unlock()
		if e != nil {
			writeAPIError(w, status, e, 0)
			return
		}
		writeJSON(w, status, v)
	}
	if e := s.checkAuth(r); e != nil {
		reply(http.StatusUnauthorized, e, nil)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		reply(http.StatusBadRequest, errParse(), nil)
		return
	}
	rec.Model = req.Model
	invalid := func(param, msg string) {
		reply(http.StatusBadRequest, &APIError{Message: msg, Type: "invalid_request_error", Param: strPtr(param)}, nil)
	}
	if len(req.Input) == 0 || string(req.Input) == "null" {
		invalid("input", "'input' is a required property")
		return
	}
	if req.Model == "" {
		invalid("model", "you must provide a model parameter")
		return
	}
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		rec.Inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &rec.Inputs); err != nil {
		invalid("input", "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.")
		return
	}
	if len(rec.Inputs) == 0 || len(rec.Inputs) > maxEmbeddingInputs || slices.Contains(rec.Inputs, "") {
		invalid("input", "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.")
		return
	}
	for _, in := range rec.Inputs {
		if n := (len(in) + 3) / 4; n > maxEmbeddingTokens {
			invalid("input", fmt.Sprintf("This model's maximum context length is %d tokens, however you requested %d tokens (%d in your prompt; 0 for the completion). Please reduce your prompt; or completion length.", maxEmbeddingTokens, n, n))
			return
		}
	}
	if f := req.EncodingFormat; f != "" && f != "float" && f != "base64" {
		invalid("encoding_format", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'float' and 'base64'.", f))
		return
	}
	if req.Dimensions != 0 {
		invalid("dimensions", "This model does not support specifying dimensions.")
		return
	}
	s.mu.Lock()
	models := s.embedModels
	s.mu.Unlock()
	if !slices.Contains(models, req.Model) {
		reply(http.StatusNotFound, &APIError{
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model),
			Type:    "invalid_request_error", Code: strPtr("model_not_found"),
		}, nil)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(rec.Inputs))
	tokens := 0
	for i, in := range rec.Inputs {
		data[i] = item{Object: "embedding", Index: i, Embedding: Embedding(in)}
		tokens += (len(in) + 3) / 4
	}
	reply(http.StatusOK, nil, map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// Embedding is the scripted server's vector for text: words (lower-case
// runs of letters and digits) and their character trigrams hashed into
// EmbeddingDims dimensions, normalized. Texts sharing words or parts of
// words (connection, connections) are close; it is deterministic, so
// tests know their answers.
func Embedding(text string) []float32 {
	v := make([]float64, EmbeddingDims)
	add := func(s string, w float64) {
		h := fnv.New32a()
		h.Write([]byte(s))
		sum := h.Sum32()
		sign := 1.0
		if sum&1 == 1 {
			sign = -1
		}
		v[(sum>>1)%EmbeddingDims] += sign * w
	}
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		add("w:"+word, 1)
		g := "^" + word + "$"
		for i := 0; i+3 <= len(g); i++ {
			add("g:"+g[i:i+3], 0.4)
		}
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, EmbeddingDims)
	if n == 0 {
		out[0] = 1
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}
