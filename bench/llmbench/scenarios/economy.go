package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Prompt caching (issue 31 §3). Providers cache a request's prompt by
// prefix: tool definitions first, then the messages in order. A request
// whose prompt begins with a prefix an earlier request of the same run
// sent is billed the cached-read price for that prefix. cachedPrefix
// models it on the request bodies: the prompt is the tools' JSON followed
// by each message's JSON, and the cached part is the longest common
// prefix with any earlier request of the run, counted in tokens as the
// scripted server counts them (bytes / 4), and only from the provider's
// minimum cacheable length on, in its steps.

// promptText is a request body's prompt in the order providers cache it.
func promptText(body []byte) ([]byte, error) {
	var req struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	out := slices.Clone([]byte(req.Tools))
	for _, m := range req.Messages {
		out = append(out, m...)
	}
	return out, nil
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Cache is how a provider caches prompt prefixes.
type Cache struct {
	MinTokens  int // the shortest prefix cached
	StepTokens int // cached lengths are multiples of this (1: any)
}

// Use is one request's prompt split into what a cache served and what
// it did not.
type Use struct {
	Prompt, Cached int // tokens (bytes / 4)
}

// CacheUse returns, per request body in order, its prompt tokens and the
// part served from the cache.
func CacheUse(bodies [][]byte, c Cache) ([]Use, error) {
	var seen [][]byte
	var out []Use
	for _, b := range bodies {
		p, err := promptText(b)
		if err != nil {
			return nil, err
		}
		best := 0
		for _, s := range seen {
			best = max(best, commonPrefix(s, p))
		}
		u := Use{Prompt: len(b) / 4, Cached: best / 4}
		if step := max(c.StepTokens, 1); u.Cached >= c.MinTokens {
			u.Cached -= u.Cached % step
		} else {
			u.Cached = 0
		}
		u.Cached = min(u.Cached, u.Prompt)
		out = append(out, u)
		seen = append(seen, p)
	}
	return out, nil
}

// Price is a provider's published rates in dollars per million tokens.
// Write is what a prompt's uncached part costs when it is long enough to
// be cached (Anthropic bills cache writes at 1.25× input; OpenAI caches
// for free: Write = In).
type Price struct {
	Name                 string
	In, Read, Write, Out float64
	Cache                Cache
	Source               string
}

// Prices are two providers' published rates as examples (issue 31 §3);
// -price-* flags of llmbench set others. Checked 2026-11: OpenAI's
// pricing page and prompt-caching guide (automatic, from 1,024 tokens in
// steps of 128, cached input at half price for gpt-4o-mini); Anthropic's
// prompt-caching documentation (writes 1.25×, reads 0.1× of input, from
// 2,048 tokens for Haiku models, a breakpoint at the end of each request).
var Prices = []Price{
	{Name: "openai gpt-4o-mini", In: 0.15, Read: 0.075, Write: 0.15, Out: 0.60, Cache: Cache{MinTokens: 1024, StepTokens: 128},
		Source: "https://openai.com/api/pricing, https://platform.openai.com/docs/guides/prompt-caching"},
	{Name: "anthropic claude-3.5-haiku", In: 0.80, Read: 0.08, Write: 1.00, Out: 4.00, Cache: Cache{MinTokens: 2048, StepTokens: 1},
		Source: "https://www.anthropic.com/pricing, https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching"},
}

// Cost is what a run's requests cost at p: the prompt part with caching,
// the prompt part without it, and the completion part.
type Cost struct {
	Prompt, PromptUncached, Completion float64 // dollars
	Cached, Prompted                   int     // tokens
}

// CostOf prices bodies (one run's requests, in order) and completion
// tokens at p.
func CostOf(p Price, bodies [][]byte, completion int) (Cost, error) {
	uses, err := CacheUse(bodies, p.Cache)
	if err != nil {
		return Cost{}, err
	}
	var c Cost
	for _, u := range uses {
		fresh := float64(u.Prompt - u.Cached)
		rate := p.In
		if u.Prompt >= p.Cache.MinTokens {
			rate = p.Write
		}
		c.Prompt += (float64(u.Cached)*p.Read + fresh*rate) / 1e6
		c.PromptUncached += float64(u.Prompt) * p.In / 1e6
		c.Cached += u.Cached
		c.Prompted += u.Prompt
	}
	c.Completion = float64(completion) * p.Out / 1e6
	return c, nil
}
