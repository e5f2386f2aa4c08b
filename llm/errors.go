package llm

import (
	"errors"
	"fmt"
)

// Sentinel errors; the *Error values Chat and Probe return wrap one of them.
var (
	ErrAuth          = errors.New("API key rejected")             // 401, 403
	ErrNotFound      = errors.New("model or endpoint not found")  // 404
	ErrRejected      = errors.New("request rejected")             // other 4xx
	ErrExhausted     = errors.New("retries exhausted")            // 429, 5xx, network errors, MaxRetries+1 times
	ErrTimeout       = errors.New("request timed out")            // Config.Timeout passed
	ErrUnreachable   = errors.New("endpoint unreachable")         // Probe: no connection
	ErrBadResponse   = errors.New("malformed response")           // 2xx that is not a chat completion
	ErrInvalidTool   = errors.New("invalid tool definition")      // ValidateTool
	ErrHistory       = errors.New("invalid message history")      // ValidateHistory
	ErrNoModelConfig = errors.New("incomplete LLM configuration") // Resolve
)

// Error is a failed exchange with the model endpoint. Its text never holds the
// API key.
type Error struct {
	URL      string // base URL, credentials removed
	Attempts int    // requests sent
	Status   int    // last HTTP status, 0 for network errors and timeouts
	Detail   string // what went wrong, e.g. "503 Service Unavailable: overloaded"
	Hint     string // what to do about it, may be empty
	Kind     error  // one of the sentinels above
}

func (e *Error) Error() string {
	var s string
	switch e.Kind {
	case ErrAuth:
		s = fmt.Sprintf("the model endpoint at %s rejected the API key (%s)", e.URL, e.Detail)
	case ErrNotFound:
		s = fmt.Sprintf("the model endpoint at %s answered 404 (%s)", e.URL, e.Detail)
	case ErrTimeout:
		s = fmt.Sprintf("the model endpoint at %s did not answer within %s", e.URL, e.Detail)
	case ErrUnreachable:
		s = fmt.Sprintf("could not reach the model endpoint %s: %s", e.URL, e.Detail)
	case ErrBadResponse:
		s = fmt.Sprintf("the model endpoint at %s sent a malformed response: %s", e.URL, e.Detail)
	case ErrExhausted:
		s = fmt.Sprintf("the model endpoint at %s failed after %d attempts: %s", e.URL, e.Attempts, e.Detail)
	default:
		s = fmt.Sprintf("the model endpoint at %s rejected the request (%s)", e.URL, e.Detail)
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Kind }
