package llm

import (
	"encoding/json"
	"time"
)

// Exchange is one Chat or Embed call, for a transcript: the request as the
// caller gave it and the body sent for it, and the normalized reply or the
// error. Every string in it has the client's API key replaced by its
// masked form.
type Exchange struct {
	Seq int // 1, 2, … per client, over both endpoints
	// Endpoint is "chat" (POST /chat/completions) or "embeddings" (POST
	// /embeddings: Request is empty, Body holds the texts sent).
	Endpoint string
	Model    string
	Request  Request
	// Body is the request body exactly as sent (the last attempt's); nil
	// when nothing was sent (a request refused before it left).
	Body     []byte
	Response Response // zero when Err is set, or for embeddings
	// Embeddings is how many vectors an embeddings call returned.
	Embeddings int
	Err        error
	Duration   time.Duration
}

// WithExchangeHook is told about every Chat and Embed call when it ends,
// successful or not (e.g. to write --transcript). f is called from the
// goroutine that made the call.
func WithExchangeHook(f func(Exchange)) Option {
	return func(c *Client) { c.onExchange = f }
}

// nextSeq numbers the client's calls for the exchange hook.
func (c *Client) nextSeq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	return c.seq
}

// observeEmbed reports one Embed call to the exchange hook.
func (c *Client) observeEmbed(body []byte, n int, err error, start time.Time) {
	x := Exchange{Seq: c.nextSeq(), Endpoint: "embeddings", Model: c.cfg.EmbeddingModel,
		Duration: time.Since(start), Embeddings: n}
	if body != nil {
		x.Body = []byte(c.redact(string(body)))
	}
	if err != nil {
		x.Err, x.Embeddings = redactedError{msg: c.redact(err.Error()), err: err}, 0
	}
	c.onExchange(x)
}

// observe reports one Chat call to the exchange hook.
func (c *Client) observe(req Request, body []byte, resp *Response, err *error, start time.Time) {
	x := Exchange{Seq: c.nextSeq(), Endpoint: "chat", Model: c.cfg.Model, Duration: time.Since(start),
		Request: Request{ToolChoice: req.ToolChoice, Tools: req.Tools, Control: req.Control}}
	if body != nil {
		x.Body = []byte(c.redact(string(body)))
	}
	for _, m := range req.Messages {
		x.Request.Messages = append(x.Request.Messages, c.redactMessage(m))
	}
	if *err != nil {
		x.Err = redactedError{msg: c.redact((*err).Error()), err: *err}
	} else {
		r := *resp
		r.Content, r.Reasoning = c.redact(r.Content), c.redact(r.Reasoning)
		r.ToolCalls = c.redactCalls(r.ToolCalls)
		x.Response = r
	}
	c.onExchange(x)
}

func (c *Client) redactMessage(m Message) Message {
	m.Content, m.Reasoning = c.redact(m.Content), c.redact(m.Reasoning)
	m.ToolCalls = c.redactCalls(m.ToolCalls)
	return m
}

func (c *Client) redactCalls(calls []ToolCall) []ToolCall {
	if len(calls) == 0 {
		return calls
	}
	out := make([]ToolCall, len(calls))
	for i, tc := range calls {
		tc.Arguments = json.RawMessage(c.redact(string(tc.Arguments)))
		out[i] = tc
	}
	return out
}

// redactedError is an error whose text has the key masked; errors.Is and
// errors.As still see the original.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
