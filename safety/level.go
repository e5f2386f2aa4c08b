package safety

import (
	"fmt"
	"strings"
)

// Level is how much a step can hurt: Safe < Medium < High.
type Level int

const (
	// Safe steps only read and cannot leak secrets; they run unattended.
	Safe Level = iota
	// Medium steps change things outside system paths or run programs.
	Medium
	// High steps destroy, escalate, reach other hosts, touch system paths or
	// run code that cannot be analysed.
	High
)

// String returns "safe", "medium" or "high".
func (l Level) String() string {
	switch l {
	case Safe:
		return "safe"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel is the inverse of String.
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "safe":
		return Safe, nil
	case "medium":
		return Medium, nil
	case "high":
		return High, nil
	}
	return Safe, fmt.Errorf("unknown risk level %q (want safe, medium or high)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Assessment is the outcome of a classification: the highest level found and
// one human-readable reason per finding, e.g. "rm -r: recursive delete".
type Assessment struct {
	Level   Level
	Reasons []string
}

// String renders the assessment on one line: "high: rm -r: recursive delete; …".
func (a Assessment) String() string {
	if len(a.Reasons) == 0 {
		return a.Level.String()
	}
	return a.Level.String() + ": " + strings.Join(a.Reasons, "; ")
}

// maxReasons bounds how many reasons one assessment keeps.
const maxReasons = 32

// add raises the level to l and records reason once.
func (a *Assessment) add(l Level, reason string) {
	a.Level = max(a.Level, l)
	if reason == "" {
		return
	}
	for _, r := range a.Reasons {
		if r == reason {
			return
		}
	}
	if len(a.Reasons) < maxReasons {
		a.Reasons = append(a.Reasons, reason)
	}
}
