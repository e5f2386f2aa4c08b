package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MaxToolCalls is how many tool calls one reply may carry (DESIGN.md: 1–3
// steps); the rest are answered with a ToolError.
const MaxToolCalls = 3

// Finish reasons after Normalize.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool_calls"
	FinishLength    = "length"
)

// Response is one reply of the model.
type Response struct {
	Content      string
	Reasoning    string // DeepSeek reasoning_content or a <think> block: show it as the thought
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
	// Problems are tool calls the caller must answer with
	// ToolMessage(p.CallID, ToolError(p)) instead of running them.
	Problems []Problem
	// Repairs says what Normalize fixed, for logs and transcripts.
	Repairs []string
}

// ProblemFor returns the problem with a tool call, if any.
func (r Response) ProblemFor(callID string) (Problem, bool) {
	for _, p := range r.Problems {
		if p.CallID == callID {
			return p, true
		}
	}
	return Problem{}, false
}

// Kinds of Problem.
const (
	ProblemUnknownTool  = "unknown_tool"
	ProblemTooManyCalls = "too_many_calls"
	ProblemBadArguments = "bad_arguments"
)

// Problem is a tool call that must not run.
type Problem struct {
	Kind   string
	CallID string
	Name   string   // the name as the model wrote it
	Detail string   // for ProblemBadArguments: what was wrong
	Known  []string // tool names offered, sorted
}

// ToolError is the tool reply for a problem call: what went wrong and what
// the model should do instead.
func ToolError(p Problem) string {
	switch p.Kind {
	case ProblemUnknownTool:
		return fmt.Sprintf("error: there is no tool named %q. Available tools: %s. Call one of them instead.",
			p.Name, strings.Join(p.Known, ", "))
	case ProblemTooManyCalls:
		return fmt.Sprintf("error: not run. At most %d tool calls are allowed per reply and this one came after them. "+
			"Look at the results of the first %d, then call it again if it is still needed.", MaxToolCalls, MaxToolCalls)
	case ProblemBadArguments:
		return fmt.Sprintf("error: the arguments of %s are not a JSON object (%s). Call it again with arguments "+
			"as a JSON object that matches the tool's parameters schema.", p.Name, p.Detail)
	}
	return "error: this tool call was not run: " + p.Kind
}

// Normalize repairs what real models get wrong, given the names of the
// tools offered (nil: any name is accepted):
//   - tool calls written in the text (```json fences, <tool_call> tags, bare
//     {"name":…,"arguments":…} objects) become tool calls and leave the text;
//   - a <think>…</think> block in the text becomes Reasoning;
//   - arguments given as an object, a JSON-encoded string, "" or null become a
//     JSON object text ("{}" when empty);
//   - missing or duplicate ids get unique "call_<n>" ids;
//   - names are trimmed ("functions.x" → "x") and made API-valid;
//   - finish_reason agrees with the presence of tool calls.
//
// Unknown names, bad arguments and calls beyond MaxToolCalls stay in
// ToolCalls, so the history pairs them with a reply, and are listed as
// problems (also in the returned Response's Problems).
func Normalize(raw Response, known map[string]bool) (Response, []Problem) {
	n := 0
	return normalize(raw, known, nil, &n)
}

// normalize numbers generated ids from *next+1, so that a Client's ids stay
// unique over a whole conversation. Calls to the tools in control (see
// Request.Control) do not count toward MaxToolCalls.
func normalize(r Response, known, control map[string]bool, next *int) (Response, []Problem) {
	r.ToolCalls = slices.Clone(r.ToolCalls)
	r.Problems = slices.Clone(r.Problems)
	r.Repairs = slices.Clone(r.Repairs)
	if r.Reasoning == "" {
		if think, rest, ok := cutThink(r.Content); ok {
			r.Reasoning, r.Content = think, rest
			r.Repairs = append(r.Repairs, "moved a <think> block to the reasoning")
		}
	}
	if len(r.ToolCalls) == 0 {
		calls, rest := extractCalls(r.Content, known)
		if len(calls) > 0 {
			r.ToolCalls, r.Content = calls, rest
			r.Repairs = append(r.Repairs, fmt.Sprintf("took %d tool call(s) out of the text", len(calls)))
		}
	}
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	slices.Sort(names)

	seen := map[string]bool{}
	for _, tc := range r.ToolCalls {
		seen[tc.ID] = true
	}
	used := map[string]bool{}
	counted := 0 // calls so far that count toward MaxToolCalls
	for i := range r.ToolCalls {
		tc := &r.ToolCalls[i]
		if tc.ID == "" || used[tc.ID] || len(tc.ID) > 200 {
			old := tc.ID
			for {
				*next++
				tc.ID = "call_" + strconv.Itoa(*next)
				if !seen[tc.ID] && !used[tc.ID] {
					break
				}
			}
			r.Repairs = append(r.Repairs, fmt.Sprintf("gave tool call %d the id %s (was %q)", i+1, tc.ID, old))
		}
		used[tc.ID] = true

		written := tc.Name
		tc.Name = cleanName(tc.Name, known)
		args, detail := normalizeArgs(tc.Arguments)
		tc.Arguments = args
		if !control[tc.Name] {
			counted++
		}
		switch {
		case known != nil && !known[tc.Name]:
			r.Problems = append(r.Problems, Problem{Kind: ProblemUnknownTool, CallID: tc.ID, Name: written, Known: names})
		case counted > MaxToolCalls && !control[tc.Name]:
			r.Problems = append(r.Problems, Problem{Kind: ProblemTooManyCalls, CallID: tc.ID, Name: tc.Name, Known: names})
		case detail != "":
			r.Problems = append(r.Problems, Problem{Kind: ProblemBadArguments, CallID: tc.ID, Name: tc.Name, Detail: detail, Known: names})
		}
	}
	switch {
	case len(r.ToolCalls) > 0 && r.FinishReason != FinishToolCalls:
		if r.FinishReason != "" {
			r.Repairs = append(r.Repairs, fmt.Sprintf("finish_reason %q with tool calls taken as tool_calls", r.FinishReason))
		}
		r.FinishReason = FinishToolCalls
	case len(r.ToolCalls) == 0 && (r.FinishReason == FinishToolCalls || r.FinishReason == "function_call" || r.FinishReason == ""):
		r.FinishReason = FinishStop
	}
	return r, r.Problems
}

// cleanName trims the name and makes it match the API's pattern, so that
// the reply can go back in the history even when the name is invented.
func cleanName(name string, known map[string]bool) string {
	name = strings.TrimSpace(name)
	if known[name] {
		return name
	}
	if _, after, ok := strings.Cut(name, "."); ok && known[after] { // "functions.read_file"
		return after
	}
	name = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "unnamed"
	}
	return name
}

// normalizeArgs returns a compact JSON object, and why the input was not
// one ("" when it was, or was empty).
func normalizeArgs(a json.RawMessage) (json.RawMessage, string) {
	a = bytes.TrimSpace(a)
	for range 2 { // a JSON string holding JSON, possibly twice encoded
		if len(a) == 0 || string(a) == "null" {
			return json.RawMessage("{}"), ""
		}
		if a[0] != '"' {
			break
		}
		var s string
		if json.Unmarshal(a, &s) != nil {
			break
		}
		a = bytes.TrimSpace([]byte(s))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(a, &obj); err != nil {
		if len(a) > 0 && a[0] == '{' {
			return json.RawMessage("{}"), "invalid JSON: " + err.Error()
		}
		return json.RawMessage("{}"), "got " + truncate(string(a), 80)
	}
	if obj == nil {
		return json.RawMessage("{}"), ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, a) != nil {
		return json.RawMessage("{}"), "invalid JSON"
	}
	return buf.Bytes(), ""
}

var thinkRE = regexp.MustCompile(`(?s)^\s*<think>(.*?)</think>\s*`)

func cutThink(s string) (think, rest string, ok bool) {
	m := thinkRE.FindStringSubmatchIndex(s)
	if m == nil {
		return "", s, false
	}
	return strings.TrimSpace(s[m[2]:m[3]]), s[m[1]:], true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
