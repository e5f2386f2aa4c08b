package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Backoff between retries: exponential from retryBase, capped, with jitter;
// a Retry-After longer than maxRetryAfter is cut to it.
const (
	retryBase     = 500 * time.Millisecond
	retryCap      = 20 * time.Second
	maxRetryAfter = 60 * time.Second
	probeTimeout  = 15 * time.Second
)

// Usage counts tokens as the endpoint reports them.
type Usage struct {
	Calls      int // successful requests
	Prompt     int
	Completion int
}

// Total is Prompt + Completion.
func (u Usage) Total() int { return u.Prompt + u.Completion }

// Request is one Chat call.
type Request struct {
	Messages []Message
	Tools    []Tool
	// ToolChoice is "" (the server's default), "auto", "none", "required",
	// or the name of the one tool the model must call.
	ToolChoice string
	// Control names tools of Tools that steer the loop rather than do work
	// (submit_plan, phase_done): calls to them do not count toward
	// MaxToolCalls.
	Control []string
}

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	cfg     Config
	oa      *openai.Client
	sleep   func(context.Context, time.Duration) error
	now     func() time.Time
	onRetry func(attempt int, wait time.Duration, err error)
	// onExchange is told about every Chat call (transcript.go).
	onExchange func(Exchange)

	mu    sync.Mutex
	total Usage
	ids   int
	seq   int // Chat calls so far, for the exchange hook
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests through hc (its Timeout should be 0: Chat
// applies Config.Timeout to each attempt).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.oa = newOpenAI(c.cfg, hc) }
}

// WithSleep replaces the wait between retries (tests).
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(c *Client) { c.sleep = sleep }
}

// WithClock replaces time.Now, used to read Retry-After dates (tests).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithRetryHook is told about each retry before its wait, e.g. to show
// "503 from the model, retrying in 2s". err holds no secret.
func WithRetryHook(f func(attempt int, wait time.Duration, err error)) Option {
	return func(c *Client) { c.onRetry = f }
}

// New returns a client for cfg (normally from Resolve).
func New(cfg Config, opts ...Option) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	c := &Client{cfg: cfg, sleep: sleepCtx, now: time.Now}
	c.oa = newOpenAI(cfg, &http.Client{})
	for _, o := range opts {
		o(c)
	}
	return c
}

func newOpenAI(cfg Config, hc *http.Client) *openai.Client {
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = repairDoer{next: hc}
	return openai.NewClientWithConfig(oc)
}

// Config is the client's configuration; print it, it masks the key.
func (c *Client) Config() Config { return c.cfg }

// Usage is the total over every successful Chat so far.
func (c *Client) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Chat sends the conversation and returns the model's normalized reply.
// Tools and history are validated first: nothing a real API would reject
// with 400 is sent. 429, 500, 502, 503, 504 and network errors are retried
// up to Config.MaxRetries times with backoff, honouring Retry-After; a
// timeout (Config.Timeout per attempt) and other statuses are not. The
// error is an *Error, or ctx's error when ctx ends.
func (c *Client) Chat(ctx context.Context, req Request) (resp Response, err error) {
	var sent []byte // the body as sent, for the exchange hook
	if c.onExchange != nil {
		ctx = context.WithValue(ctx, sentKey{}, &sent)
		defer func(start time.Time) { c.observe(req, sent, &resp, &err, start) }(time.Now())
	}
	known := make(map[string]bool, len(req.Tools))
	control := make(map[string]bool, len(req.Control))
	for _, n := range req.Control {
		control[n] = true
	}
	for _, t := range req.Tools {
		if err := ValidateTool(t); err != nil {
			return Response{}, err
		}
		known[t.Name] = true
	}
	if err := ValidateHistory(req.Messages); err != nil {
		return Response{}, err
	}
	wreq := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: toWire(req.Messages)}
	if len(req.Tools) > 0 {
		wreq.Tools, wreq.ToolChoice = toolsToWire(req.Tools), toolChoice(req.ToolChoice)
	}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		wresp, err := c.oa.CreateChatCompletion(actx, wreq)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil && len(wresp.Choices) == 0 {
			return Response{}, &Error{URL: c.url(), Attempts: attempt, Status: 200, Kind: ErrBadResponse, Detail: "no choices"}
		}
		if err == nil {
			return c.finish(wresp, known, control), nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("llm: %w", context.Cause(ctx))
		}
		e, retry := c.classify(err, timedOut)
		e.Attempts = attempt
		if retry && attempt > c.cfg.MaxRetries {
			e.Kind = ErrExhausted
			return Response{}, e
		}
		if !retry {
			return Response{}, e
		}
		wait := backoff(attempt)
		if ra, ok := retryAfter(wresp.Header(), c.now()); ok {
			wait = ra
		}
		if c.onRetry != nil {
			c.onRetry(attempt, wait, e)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return Response{}, fmt.Errorf("llm: %w", err)
		}
	}
}

func (c *Client) finish(wresp openai.ChatCompletionResponse, known, control map[string]bool) Response {
	raw := fromWire(wresp)
	if h := wresp.Header().Get(repairedHeader); h != "" {
		raw.Repairs = append(raw.Repairs, h)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(known) == 0 {
		known = map[string]bool{} // no tools offered: take nothing out of the text
	}
	resp, _ := normalize(raw, known, control, &c.ids)
	c.total.Calls++
	c.total.Prompt += resp.Usage.Prompt
	c.total.Completion += resp.Usage.Completion
	return resp
}

// classify turns a failed attempt into an *Error and says whether to retry.
func (c *Client) classify(err error, timedOut bool) (*Error, bool) {
	e := &Error{URL: c.url()}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var synErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case timedOut:
		e.Kind, e.Detail = ErrTimeout, c.cfg.Timeout.String()
		e.Hint = "raise the timeout (llm.timeout) or use a faster model"
		return e, false
	case errors.As(err, &apiErr):
		e.Status, e.Detail = apiErr.HTTPStatusCode, apiErr.Message
	case errors.As(err, &reqErr):
		e.Status, e.Detail = reqErr.HTTPStatusCode, strings.TrimSpace(string(reqErr.Body))
	case errors.As(err, &synErr), errors.As(err, &typeErr):
		e.Kind, e.Detail = ErrBadResponse, c.redact(err.Error())
		return e, false
	default: // network
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		e.Kind, e.Detail = ErrUnreachable, c.redact(err.Error()) // not "rejected": no answer came
		if c.cfg.Provider == ProviderOllama {
			e.Hint = ollamaHint(c.cfg)
		}
		return e, true
	}
	e.Detail = c.redact(fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), truncate(e.Detail, 300)))
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return e, true
	case http.StatusUnauthorized, http.StatusForbidden:
		e.Kind = ErrAuth
		if c.cfg.APIKey == "" {
			e.Hint = "no API key is set: set " + first(c.cfg.KeySource, "AGENT_API_KEY")
		} else {
			e.Hint = "check the key in " + first(c.cfg.KeySource, "AGENT_API_KEY")
		}
	case http.StatusNotFound:
		e.Kind = ErrNotFound
		e.Hint = fmt.Sprintf("check the model name %q and the base URL", c.cfg.Model)
		if c.cfg.Provider == ProviderOllama {
			e.Hint = fmt.Sprintf("run `ollama pull %s`, or check the model name", c.cfg.Model)
		}
	default:
		e.Kind = ErrRejected
	}
	return e, false
}

// Probe checks that the endpoint answers GET /models (and, for Ollama, that
// the model is pulled). For the default local Ollama it says how to install
// it or configure a hosted provider instead.
func (c *Client) Probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, min(c.cfg.Timeout, probeTimeout))
	defer cancel()
	models, err := c.oa.ListModels(pctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("llm: %w", context.Cause(ctx))
		}
		e, retryable := c.classify(err, errors.Is(pctx.Err(), context.DeadlineExceeded))
		e.Attempts = 1
		switch {
		case e.Kind == ErrTimeout || retryable && e.Status == 0:
			e.Kind = ErrUnreachable
			if c.cfg.Provider == ProviderOllama {
				e.Hint = ollamaHint(c.cfg)
			}
		case e.Kind == ErrNotFound && c.cfg.Provider != ProviderOllama:
			return nil // reachable; not every server lists models
		case retryable:
			e.Kind = ErrRejected
		}
		return e
	}
	if c.cfg.Provider != ProviderOllama {
		return nil
	}
	for _, m := range models.Models {
		if m.ID == c.cfg.Model || m.ID == c.cfg.Model+":latest" {
			return nil
		}
	}
	return &Error{URL: c.url(), Attempts: 1, Status: 200, Kind: ErrNotFound,
		Detail: fmt.Sprintf("Ollama has no model %q", c.cfg.Model), Hint: fmt.Sprintf("run `ollama pull %s`", c.cfg.Model)}
}

func ollamaHint(cfg Config) string {
	if cfg.BaseURL != OllamaBaseURL {
		return "is Ollama running there? (`ollama serve`)"
	}
	return fmt.Sprintf("no LLM is configured, and no local Ollama answers: install it from https://ollama.com/download "+
		"and run `ollama pull %s`, or set DEEPSEEK_API_KEY or OPENAI_API_KEY (or AGENT_BASE_URL, AGENT_MODEL "+
		"and AGENT_API_KEY for another OpenAI-compatible server)", cfg.Model)
}

func (c *Client) url() string { return redactURL(c.cfg.BaseURL) }

// redact removes the key from text that came from the server or the network.
func (c *Client) redact(s string) string {
	if len(c.cfg.APIKey) >= 4 {
		s = strings.ReplaceAll(s, c.cfg.APIKey, c.cfg.Redacted())
	}
	return s
}

// backoff is the wait after the attempt-th failure: exponential, capped,
// with jitter in [d/2, d).
func backoff(attempt int) time.Duration {
	d := retryBase << min(attempt-1, 10)
	d = min(d, retryCap)
	return d/2 + rand.N(d/2)
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After: seconds or an
// HTTP date, capped at maxRetryAfter.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	var d time.Duration
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if v := strings.TrimSpace(h.Get("Retry-After")); v == "" {
		return 0, false
	} else if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		d = time.Duration(secs * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = max(t.Sub(now), 0)
	} else {
		return 0, false
	}
	return min(d, maxRetryAfter), true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
