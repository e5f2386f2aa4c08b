package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

const testKey = "sk-test-secret-key-0123456789wxyz"

// sleeps records the waits between retries instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func newTestClient(t *testing.T, url string, opts ...Option) (*Client, *sleeps) {
	t.Helper()
	s := &sleeps{}
	cfg := Config{BaseURL: url, APIKey: testKey, Model: "gpt-4o-mini", Provider: ProviderGeneric, Timeout: 5 * time.Second, MaxRetries: 2, KeySource: "AGENT_API_KEY"}
	return New(cfg, append([]Option{WithSleep(s.sleep)}, opts...)...), s
}

var readFile = Tool{Name: "read_file", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}

func userReq(text string) Request {
	return Request{Messages: []Message{{Role: RoleSystem, Content: "You are a test."}, {Role: RoleUser, Content: text}}, Tools: []Tool{readFile}}
}

func noKey(t *testing.T, what string) {
	t.Helper()
	if strings.Contains(what, testKey) || strings.Contains(what, "secret-key") {
		t.Errorf("API key leaked: %s", what)
	}
}

func TestRetry429ThenSuccess(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.RateLimited(1500*time.Millisecond), testenv.Text("hello"))
	var hooked []string
	c, s := newTestClient(t, srv.URL, WithRetryHook(func(n int, d time.Duration, err error) { hooked = append(hooked, fmt.Sprint(n, d, err)) }))
	resp, err := c.Chat(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "hello" || len(srv.Requests()) != 2 {
		t.Errorf("content %q after %d requests", resp.Content, len(srv.Requests()))
	}
	if len(s.d) != 1 || s.d[0] != 1500*time.Millisecond {
		t.Errorf("waits = %v, want [1.5s] from Retry-After", s.d)
	}
	if len(hooked) != 1 || !strings.Contains(hooked[0], "429") {
		t.Errorf("hook: %v", hooked)
	}
	for _, h := range hooked {
		noKey(t, h)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

func TestPersistent500(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.ErrorReply(500, ""), testenv.ErrorReply(502, ""), testenv.ErrorReply(503, ""), testenv.Text("never"))
	c, s := newTestClient(t, srv.URL)
	start := time.Now()
	_, err := c.Chat(context.Background(), userReq("hi"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v", err)
	}
	want := "the model endpoint at " + srv.URL + " failed after 3 attempts: 503 Service Unavailable: The server is overloaded"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q\nwant prefix %q", err, want)
	}
	if len(srv.Requests()) != 3 || len(s.d) != 2 || time.Since(start) > 2*time.Second {
		t.Errorf("%d requests, waits %v, took %v", len(srv.Requests()), s.d, time.Since(start))
	}
	for i, d := range s.d { // jittered exponential backoff
		lo := retryBase << i / 2
		if d < lo || d >= 2*lo {
			t.Errorf("wait %d = %v, want in [%v, %v)", i, d, lo, 2*lo)
		}
	}
}

func TestNotRetried(t *testing.T) {
	for _, tt := range []struct {
		reply testenv.Reply
		kind  error
		want  []string
	}{
		{testenv.ErrorReply(401, ""), ErrAuth, []string{"rejected the API key", "401 Unauthorized", "check the key in AGENT_API_KEY"}},
		{testenv.ErrorReply(404, "The model `x` does not exist"), ErrNotFound, []string{"404", `check the model name "gpt-4o-mini"`}},
		{testenv.ErrorReply(400, "bad things"), ErrRejected, []string{"rejected the request (400 Bad Request: bad things)"}},
	} {
		srv := testenv.StartLLMServer(t, tt.reply, testenv.Text("never"))
		c, s := newTestClient(t, srv.URL)
		_, err := c.Chat(context.Background(), userReq("hi"))
		if !errors.Is(err, tt.kind) || len(srv.Requests()) != 1 || len(s.d) != 0 {
			t.Errorf("%d: err %v after %d requests", tt.reply.Status, err, len(srv.Requests()))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
	}
}

func TestWrongKeyNeverShown(t *testing.T) {
	srv := testenv.StartLLMServer(t).RequireKey("sk-the-right-one-000000")
	c, _ := newTestClient(t, srv.URL)
	_, err := c.Chat(context.Background(), userReq("hi"))
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "AGENT_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	noKey(t, err.Error())
	noKey(t, fmt.Sprintf("%v %+v %#v", c.Config(), c.Config(), c.Config()))

	// A server that echoes the key in its error body.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"x"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer echo.Close()
	var hooked []string
	c, _ = newTestClient(t, echo.URL, WithRetryHook(func(_ int, _ time.Duration, err error) { hooked = append(hooked, err.Error()) }))
	_, err = c.Chat(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "sk-…wxyz") {
		t.Fatalf("err = %v", err)
	}
	noKey(t, err.Error())
	for _, h := range hooked {
		noKey(t, h)
	}

	noAuth := New(Config{BaseURL: srv.URL, Model: "m", KeySource: "DEEPSEEK_API_KEY"})
	if _, err := noAuth.Chat(context.Background(), userReq("hi")); err == nil || !strings.Contains(err.Error(), "no API key is set: set DEEPSEEK_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Reply{Content: "late", Delay: 5 * time.Second}, testenv.Text("never"))
	c, s := newTestClient(t, srv.URL)
	c.cfg.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := c.Chat(context.Background(), userReq("hi"))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "did not answer within 100ms") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second || len(s.d) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("took %v, waits %v, %d requests", time.Since(start), s.d, len(srv.Requests()))
	}
}

func TestCancelStops(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Reply{Content: "late", Delay: 5 * time.Second})
	c, _ := newTestClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Chat(ctx, userReq("hi")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

// refusing dials fail like a port nobody listens on.
func refusing() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("connect: connection refused")
	}}}
}

func TestNetworkErrorsRetriedThenOllamaHint(t *testing.T) {
	s := &sleeps{}
	c := New(Config{BaseURL: OllamaBaseURL, Model: OllamaModel, Provider: ProviderOllama, MaxRetries: 1}, WithSleep(s.sleep), WithHTTPClient(refusing()))
	_, err := c.Chat(context.Background(), userReq("hi"))
	if !errors.Is(err, ErrExhausted) || len(s.d) != 1 {
		t.Fatalf("err = %v, waits %v", err, s.d)
	}
	for _, w := range []string{"failed after 2 attempts: connect: connection refused", "https://ollama.com/download", "DEEPSEEK_API_KEY", "ollama pull qwen2.5:7b"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	err = c.Probe(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "install it from https://ollama.com/download") {
		t.Errorf("Probe: %v", err)
	}
}

// TestNetworkErrorWording: a connection that fails is "could not reach",
// in the retry warning and from Probe, never "rejected the request".
func TestNetworkErrorWording(t *testing.T) {
	var retried []string
	c := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Provider: ProviderGeneric, MaxRetries: 1},
		WithSleep((&sleeps{}).sleep), WithHTTPClient(refusing()),
		WithRetryHook(func(_ int, _ time.Duration, err error) { retried = append(retried, err.Error()) }))
	_, err := c.Chat(context.Background(), userReq("hi"))
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v", err)
	}
	want := "could not reach the model endpoint http://127.0.0.1:1/v1: connect: connection refused"
	if len(retried) != 1 || retried[0] != want {
		t.Errorf("retry warnings %q, want [%q]", retried, want)
	}
	if err := c.Probe(context.Background()); !errors.Is(err, ErrUnreachable) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Probe: %v", err)
	}
}

func TestProbe(t *testing.T) {
	srv := testenv.StartLLMServer(t)
	c, _ := newTestClient(t, srv.URL)
	if err := c.Probe(context.Background()); err != nil {
		t.Errorf("Probe: %v", err)
	}
	ollama := New(Config{BaseURL: srv.URL, Model: "llama3:70b", Provider: ProviderOllama})
	if err := ollama.Probe(context.Background()); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "ollama pull llama3:70b") {
		t.Errorf("Probe of a model not pulled: %v", err)
	}
	ollama = New(Config{BaseURL: srv.URL, Model: "qwen2.5:7b", Provider: ProviderOllama})
	if err := ollama.Probe(context.Background()); err != nil {
		t.Errorf("Probe: %v", err)
	}
	bad := New(Config{BaseURL: srv.URL, APIKey: "sk-wrong-000000000", Model: "m", KeySource: "OPENAI_API_KEY"})
	srv.RequireKey("sk-right")
	if err := bad.Probe(context.Background()); !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("Probe with a wrong key: %v", err)
	}
}

func TestUsageTotalsConcurrent(t *testing.T) {
	const n = 8
	var replies []testenv.Reply
	for range n {
		replies = append(replies, testenv.Reply{Content: "ok", PromptTokens: 100, CompletionTokens: 7})
	}
	srv := testenv.StartLLMServer(t, replies...)
	c, _ := newTestClient(t, srv.URL)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := c.Chat(context.Background(), userReq("hi"))
			if err != nil || resp.Usage != (Usage{Calls: 1, Prompt: 100, Completion: 7}) {
				t.Errorf("resp %+v, err %v", resp.Usage, err)
			}
		})
	}
	wg.Wait()
	if got := c.Usage(); got != (Usage{Calls: n, Prompt: 100 * n, Completion: 7 * n}) || got.Total() != 107*n {
		t.Errorf("Usage = %+v", got)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second, true},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{http.Header{"Retry-After": {"3600"}}, maxRetryAfter, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		got, ok := retryAfter(tt.h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%v) = %v %v, want %v %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
	for a := 1; a < 20; a++ {
		if d := backoff(a); d <= 0 || d > retryCap {
			t.Errorf("backoff(%d) = %v", a, d)
		}
	}
}

func TestRetryAfterDateOverHTTP(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 1 {
			w.Header().Set("Retry-After", now.Add(4*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	c, s := newTestClient(t, srv.URL, WithClock(func() time.Time { return now }))
	if resp, err := c.Chat(context.Background(), userReq("hi")); err != nil || resp.Content != "ok" {
		t.Fatalf("%+v %v", resp, err)
	}
	if len(s.d) != 1 || s.d[0] != 4*time.Second {
		t.Errorf("waits = %v", s.d)
	}
}

func TestChatRefusesBadInput(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Text("never"))
	c, _ := newTestClient(t, srv.URL)
	req := userReq("hi")
	req.Tools = []Tool{{Name: "bad name", Parameters: []byte(`{"type":"object"}`)}}
	if _, err := c.Chat(context.Background(), req); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("bad tool: %v", err)
	}
	req = userReq("hi")
	req.Messages = append(req.Messages, ToolMessage("orphan", "x"))
	if _, err := c.Chat(context.Background(), req); !errors.Is(err, ErrHistory) {
		t.Errorf("orphan reply: %v", err)
	}
	req = userReq("hi")
	req.Messages = append(req.Messages, Message{Role: RoleAssistant, ToolCalls: []ToolCall{call("c1", "read_file", `{}`)}})
	req.Messages = append(req.Messages, Message{Role: RoleUser, Content: "and?"})
	if _, err := c.Chat(context.Background(), req); !errors.Is(err, ErrHistory) {
		t.Errorf("orphan call: %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("%d requests sent", len(srv.Requests()))
	}
}
