package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

// Issue 31 §3: what each request is made of. RequestParts splits a
// request body into named parts, in bytes of the body (JSON as sent):
// the step tools' definitions and the control tools' (phase_done,
// submit_plan); the system prompt by its "## " sections — "rules" before
// the first (with the line naming the other tools, "other tools"), and
// in the steps run the variables and files after them ("variables and
// files"); then the other messages by role. PartsTable sums them per
// scenario and variant, so that adaptive's requests can be compared with
// ReAct's part by part.

// Part names of RequestParts, in the order PartsTable prints them.
const (
	PartStepTools    = "step tools"
	PartControlTools = "control tools"
	PartRules        = "rules"
	PartOtherTools   = "other tools"
	PartVarsFiles    = "variables and files"
	partOtherKeys    = "other keys" // model name, tool_choice, JSON punctuation
)

// partOrder is the order of the parts in a table; a part not named here
// comes after them, sorted.
var partOrder = []string{PartStepTools, PartControlTools, PartRules, PartOtherTools, "environment", "task", "planning",
	"plan", "steps run", PartVarsFiles, "phases done", "current phase", "user", "assistant", "tool", partOtherKeys}

// RequestParts returns the parts of one request body, in bytes; they sum
// to the body's size.
func RequestParts(body []byte) (map[string]int, error) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	out := map[string]int{}
	used := 0
	for _, raw := range req.Tools {
		var t struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("tool definition: %w", err)
		}
		part := PartStepTools
		if n := t.Function.Name; n == stepgen.PhaseDoneName || n == planner.SubmitPlanName {
			part = PartControlTools
		}
		out[part] += len(raw)
		used += len(raw)
	}
	for _, raw := range req.Messages {
		var m struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		used += len(raw)
		text, isText := m.Content.(string)
		if m.Role != "system" || !isText {
			out[m.Role] += len(raw)
			continue
		}
		// the system prompt's sections, each counted as its JSON text
		// (escapes included); the message's keys go with "rules"
		enc := func(s string) int { b, _ := json.Marshal(s); return len(b) - 2 }
		sections := systemSections(text)
		rest := len(raw)
		for _, s := range sections {
			n := enc(s.text)
			out[s.name] += n
			rest -= n
		}
		out[PartRules] += rest
	}
	out[partOtherKeys] += len(body) - used
	return out, nil
}

type section struct{ name, text string }

// systemSections splits a system prompt at its "\n## " headings; each
// section is named by its heading, in lower case, without a number or
// what follows a colon ("## Current phase 2: x" is "current phase"); the
// text before the first is "rules".
func systemSections(s string) []section {
	var out []section
	add := func(name, text string) {
		if text != "" {
			out = append(out, section{name, text})
		}
	}
	name := PartRules
	for s != "" {
		if rest, ok := strings.CutPrefix(s, "\n## "); ok {
			heading, _, _ := strings.Cut(rest, "\n")
			heading, _, _ = strings.Cut(heading, ":")
			name = strings.ToLower(strings.TrimRight(strings.TrimSpace(heading), " 0123456789"))
		}
		end := len(s)
		if i := strings.Index(s[1:], "\n## "); i >= 0 {
			end = i + 1
		}
		addSection(add, name, s[:end])
		s = s[end:]
	}
	return out
}

// addSection adds a section, splitting off the parts it holds: the
// rules' line naming the other tools (or ReAct's environment), the
// steps' variables and files.
func addSection(add func(name, text string), name, text string) {
	split := func(at int, second string) {
		add(name, text[:at])
		add(second, text[at:])
	}
	switch name {
	case PartRules:
		if i := strings.Index(text, "\nOther tools"); i >= 0 {
			split(i+1, PartOtherTools)
			return
		}
		if i := strings.Index(text, "\nEnvironment:\n"); i >= 0 { // ReAct's prompt
			split(i, "environment")
			return
		}
	case "steps run":
		at := -1
		for _, h := range []string{"\nVariables:", "\nFiles of this session", "\nFiles accessed:"} {
			if i := strings.Index(text, h); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at >= 0 {
			split(at, PartVarsFiles)
			return
		}
	}
	add(name, text)
}

// PartsTable renders, per scenario, adaptive's and ReAct's (same tools)
// request bytes by part, summed over their requests, with each part's
// bytes per request.
func PartsTable(ps []Pair) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-10s %-9s %5s  %s\n", "scenario", "variant", "calls", "bytes by part, all requests (per request)")
	for _, p := range append(ps, Totals(ps)) {
		for _, m := range []Measure{p.ReAct, p.Adaptive} {
			sum := map[string]int{}
			for _, body := range m.Bodies {
				parts, err := RequestParts(body)
				if err != nil {
					return "", fmt.Errorf("%s %s: %w", m.Scenario, m.Variant, err)
				}
				for k, v := range parts {
					sum[k] += v
				}
			}
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range sum {
					if !slices.Contains(partOrder, k) && !yield(k) {
						return
					}
				}
			})
			var cols []string
			for _, k := range append(slices.Clone(partOrder), names...) {
				if v := sum[k]; v > 0 {
					cols = append(cols, fmt.Sprintf("%s %d (%d)", k, v, v/max(len(m.Bodies), 1)))
				}
			}
			fmt.Fprintf(&b, "%-10s %-9s %5d  %s\n", m.Scenario, m.Variant, len(m.Bodies), strings.Join(cols, ", "))
		}
	}
	return b.String(), nil
}
