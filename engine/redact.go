package engine

import (
	"strings"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/safety"
)

// Redactor removes secrets from what a run reports: safety.RedactString's
// patterns, and the literal values of the host's secret-named variables.
type Redactor struct {
	Secrets []string // longest first
}

// String returns s with its secrets replaced.
func (r Redactor) String(s string) string {
	s = safety.RedactString(s)
	for _, v := range r.Secrets {
		s = strings.ReplaceAll(s, v, safety.Redacted)
	}
	return s
}

// Event returns a copy of ev with every string in it through String;
// parameters whose names say secret are replaced whole (safety.Redact).
func (r Redactor) Event(ev event.Event) event.Event {
	return ev.Redacted(r.String, safety.Redact)
}
