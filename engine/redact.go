package engine

import (
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/redact"
)

// Redactor removes secrets from what a run reports: the session's secret
// set (redact.Set: the patterns, and every value agent knows or found to
// be secret, in every shape).
type Redactor struct {
	Set *redact.Set // nil: the patterns alone
}

// String returns s with its secrets replaced.
func (r Redactor) String(s string) string { return r.Set.String(s) }

// Event returns a copy of ev with every string in it through String;
// parameters whose names say secret are replaced whole.
func (r Redactor) Event(ev event.Event) event.Event {
	return ev.Redacted(r.String, r.Set.Params)
}

// addSecrets adds a host's secret values (its secret-named and vaulted
// variables, --var values marked secret) and its become password to set
// as Known.
func addSecrets(set *redact.Set, values []string, become *HostBecome) {
	for _, v := range values {
		set.Add("SECRET", v, redact.Known)
	}
	if become != nil && become.Config.Password != "" {
		set.Add("BECOME_PASSWORD", become.Config.Password, redact.Known)
	}
}
