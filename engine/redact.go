package engine

import (
	"strings"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/redact"
)

// Redactor removes secrets from what a run reports: redact.String's
// patterns, and the literal values of the host's secret-named variables.
type Redactor struct {
	Secrets []string // longest first
}

// String returns s with its secrets replaced.
func (r Redactor) String(s string) string {
	s = redact.String(s)
	for _, v := range r.Secrets {
		s = strings.ReplaceAll(s, v, redact.Redacted)
	}
	return s
}

// Event returns a copy of ev with every string in it through String;
// parameters whose names say secret are replaced whole (redact.Params).
func (r Redactor) Event(ev event.Event) event.Event {
	return ev.Redacted(r.String, redact.Params)
}
