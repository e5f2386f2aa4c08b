// Package llm owns the conversation with an OpenAI-compatible Chat Completions endpoint: configuration, retries, token usage, and the repair of real models' malformed replies.
package llm
