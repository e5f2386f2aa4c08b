package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// LLMServer is a scripted OpenAI-compatible Chat Completions server on
// 127.0.0.1. Each POST /v1/chat/completions that passes validation (see
// Dialect) is answered with the next Reply of the script; every request is
// recorded. It serves GET /v1/models too, and POST /v1/embeddings with
// deterministic vectors (embed.go). Requests that real APIs reject are
// rejected with their 400 bodies and recorded as Rejected.
type LLMServer struct {
	// URL is the base URL for a client, "http://127.0.0.1:port/v1".
	URL string

	srv  *http.Server
	ln   net.Listener
	done chan struct{} // closed by Close: unblocks delayed replies
	once sync.Once

	mu      sync.Mutex
	script  []Reply
	served  int // script entries consumed
	records []RecordedRequest
	key     string   // required bearer key; "" accepts any
	models  []string // served by /v1/models
	strict  bool     // reject models not in models
	dialect Dialect
	seq     int // id counter

	embedModels []string          // served by /v1/embeddings
	embeds      []EmbeddingRecord // requests to /v1/embeddings
}

// Dialect selects whose error wording and extra rules the server follows.
type Dialect int

const (
	// DialectOpenAI answers with OpenAI's error bodies (the default).
	DialectOpenAI Dialect = iota
	// DialectDeepSeek answers with DeepSeek's wording of the same errors
	// (param null, code "invalid_request_error"), as deepseek-chat does.
	DialectDeepSeek
	// DialectDeepSeekReasoner is deepseek-reasoner (R1) as documented in its
	// reasoning-model guide: an input message carrying reasoning_content is
	// rejected with 400.
	DialectDeepSeekReasoner
	// DialectDeepSeekThinking is DeepSeek's thinking mode with tool calls
	// (V3.2 and later): the opposite rule — an assistant message with
	// tool_calls must carry its reasoning_content back, or 400.
	DialectDeepSeekThinking
)

func (d Dialect) deepSeek() bool { return d != DialectOpenAI }

// RecordedRequest is one request to /v1/chat/completions and how it was
// answered.
type RecordedRequest struct {
	Header  http.Header
	Body    []byte       // raw request body
	Request *ChatRequest // decoded body; nil when it was not JSON
	// Status is the HTTP status answered; 0 when the client went away
	// before the (delayed) reply.
	Status int
	// Error is the error body answered, nil on success.
	Error *APIError
	// Rejected is true when the server itself refused the request (auth,
	// validation, streaming, unknown model, script exhausted), as opposed
	// to a scripted error reply.
	Rejected bool
}

// APIError is the "error" object of OpenAI's error body
// {"error":{"message":…,"type":…,"param":…,"code":…}}.
type APIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// StartLLMServer starts an LLMServer with script, fails t on error and
// closes the server when t ends.
func StartLLMServer(t testing.TB, script ...Reply) *LLMServer {
	t.Helper()
	s, err := NewLLMServer(script...)
	if err != nil {
		t.Fatalf("start LLM server: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// NewLLMServer listens on 127.0.0.1:0 and answers from script. It accepts
// any API key until RequireKey is called.
func NewLLMServer(script ...Reply) (*LLMServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("LLM server listen: %w", err)
	}
	s := &LLMServer{
		URL:    "http://" + ln.Addr().String() + "/v1",
		ln:     ln,
		done:   make(chan struct{}),
		script: slices.Clone(script),
		models: []string{"gpt-4o-mini", "gpt-4o", "deepseek-chat", "deepseek-reasoner", "qwen2.5:7b"},

		embedModels: slices.Clone(DefaultEmbeddingModels),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// RequireKey makes every request need "Authorization: Bearer key"; others
// get OpenAI's 401. "" accepts any request again.
func (s *LLMServer) RequireKey(key string) *LLMServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
	return s
}

// SetModels replaces the models listed by /v1/models and makes the server
// answer a request for any other model with OpenAI's 404 model_not_found.
// By default a fixed list is served and any model name is accepted.
func (s *LLMServer) SetModels(names ...string) *LLMServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(names)
	s.strict = true
	return s
}

// SetDialect selects the API whose error wording and rules apply.
func (s *LLMServer) SetDialect(d Dialect) *LLMServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialect = d
	return s
}

// Push appends replies to the script.
func (s *LLMServer) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns a copy of every chat completion request received, in
// arrival order (requests to /v1/models are not recorded).
func (s *LLMServer) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// Rejections returns the recorded requests the server itself refused.
func (s *LLMServer) Rejections() []RecordedRequest {
	var out []RecordedRequest
	for _, r := range s.Requests() {
		if r.Rejected {
			out = append(out, r)
		}
	}
	return out
}

// CheckNoRejections reports every rejected request as an error of t.
func (s *LLMServer) CheckNoRejections(t testing.TB) {
	t.Helper()
	for _, r := range s.Rejections() {
		msg := ""
		if r.Error != nil {
			msg = r.Error.Message
		}
		t.Errorf("scripted LLM server rejected a request with %d: %s\nbody: %s", r.Status, msg, r.Body)
	}
}

// Remaining reports how many scripted replies have not been served yet.
func (s *LLMServer) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.served
}

// Close stops the server and cancels delayed replies.
func (s *LLMServer) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		err = s.srv.Close()
	})
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *LLMServer) handleModels(w http.ResponseWriter, r *http.Request) {
	if e := s.checkAuth(r); e != nil {
		writeAPIError(w, http.StatusUnauthorized, e, 0)
		return
	}
	s.mu.Lock()
	names := slices.Clone(s.models)
	s.mu.Unlock()
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, n := range names {
		list.Data = append(list.Data, model{ID: n, Object: "model", Created: 1700000000, OwnedBy: "testenv"})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *LLMServer) handleChat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := RecordedRequest{Header: r.Header.Clone(), Body: body}
	var req ChatRequest
	if err := json.Unmarshal(body, &req); err == nil {
		rec.Request = &req
	}
	idx := s.record(rec)

	reject := func(status int, e *APIError) {
		s.update(idx, func(rr *RecordedRequest) { rr.Status, rr.Error, rr.Rejected = status, e, true })
		writeAPIError(w, status, e, 0)
	}
	if e := s.checkAuth(r); e != nil {
		reject(http.StatusUnauthorized, e)
		return
	}
	if rec.Request == nil {
		reject(http.StatusBadRequest, errParse())
		return
	}
	s.mu.Lock()
	dialect, strict, models := s.dialect, s.strict, s.models
	s.mu.Unlock()
	if e := validateChat(&req, dialect); e != nil {
		reject(http.StatusBadRequest, e)
		return
	}
	if strict && !slices.Contains(models, req.Model) {
		reject(http.StatusNotFound, &APIError{
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model),
			Type:    "invalid_request_error", Code: strPtr("model_not_found"),
		})
		return
	}

	reply, n, ok := s.next()
	if !ok {
		reject(http.StatusInternalServerError, &APIError{
			Message: fmt.Sprintf("scripted LLM server: script exhausted after %d requests (Push more replies)", n),
			Type:    "server_error",
		})
		return
	}
	if reply.Func != nil {
		reply = reply.Func(&req)
		reply.Func = nil
	}
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return // Status stays 0: the client went away
		case <-s.done:
			return
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		e := reply.apiError()
		s.update(idx, func(rr *RecordedRequest) { rr.Status, rr.Error = reply.Status, e })
		writeAPIError(w, reply.Status, e, reply.RetryAfter)
		return
	}
	resp := s.render(&req, len(body), reply)
	s.update(idx, func(rr *RecordedRequest) { rr.Status = http.StatusOK })
	writeJSON(w, http.StatusOK, resp)
}

// record appends rec and returns its index.
func (s *LLMServer) record(rec RecordedRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, rec)
	return len(s.records) - 1
}

func (s *LLMServer) update(i int, f func(*RecordedRequest)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.records[i])
}

// next takes the next scripted reply; ok is false when the script is
// exhausted, with n the number of replies served.
func (s *LLMServer) next() (r Reply, n int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.served >= len(s.script) {
		return Reply{}, s.served, false
	}
	r = s.script[s.served]
	s.served++
	return r, s.served, true
}

// checkAuth returns OpenAI's 401 error when a key is required and the
// request does not carry it.
func (s *LLMServer) checkAuth(r *http.Request) *APIError {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key == "" {
		return nil
	}
	got := r.Header.Get("Authorization")
	token, found := cutPrefixFold(got, "Bearer ")
	if !found || token == "" {
		return &APIError{
			Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
			Type:    "invalid_request_error",
		}
	}
	if token != key {
		return &APIError{
			Message: fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", maskKey(token)),
			Type:    "invalid_request_error", Code: strPtr("invalid_api_key"),
		}
	}
	return nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && bytes.EqualFold([]byte(s[:len(prefix)]), []byte(prefix)) {
		return s[len(prefix):], true
	}
	return s, false
}

// maskKey shows a key the way OpenAI does: a few leading and the last four
// characters.
func maskKey(k string) string {
	if len(k) <= 8 {
		return "****"
	}
	return k[:3] + "*****" + k[len(k)-4:]
}

func strPtr(s string) *string { return &s }

func errParse() *APIError {
	return &APIError{
		Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
		Type:    "invalid_request_error",
	}
}

func writeAPIError(w http.ResponseWriter, status int, e *APIError, retryAfter time.Duration) {
	if retryAfter > 0 {
		secs := int64((retryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	writeJSON(w, status, struct {
		Error *APIError `json:"error"`
	}{e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
