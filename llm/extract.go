package llm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

var (
	tagRE   = regexp.MustCompile(`(?s)<tool_call>(.*?)(?:</tool_call>|$)`)
	fenceRE = regexp.MustCompile("(?s)```[a-zA-Z_]*[ \t]*\n?(.*?)```")
)

// Limits that keep extraction linear enough on hostile text.
const (
	maxScan      = 64 << 10
	maxBareTries = 256
)

// extractCalls finds tool calls written in the text: <tool_call> tags and
// ``` fences holding one call or an array of them (any name), and bare
// objects (only names in known, unless known is nil). It returns them and
// the text without them.
func extractCalls(s string, known map[string]bool) ([]ToolCall, string) {
	if len(s) > maxScan || !strings.Contains(s, "{") {
		return nil, s
	}
	var calls []ToolCall
	for _, re := range []*regexp.Regexp{tagRE, fenceRE} {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			inner := re.FindStringSubmatch(m)[1]
			if cs := parseCalls(inner, nil); cs != nil {
				calls = append(calls, cs...)
				return ""
			}
			return m
		})
	}
	var b strings.Builder
	start, tries := 0, 0
	for i := 0; i < len(s) && tries < maxBareTries; i++ {
		if s[i] != '{' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			continue
		}
		end := i + int(dec.InputOffset())
		if cs := parseCalls(string(v), known); cs != nil {
			calls = append(calls, cs...)
			b.WriteString(s[start:i])
			start = end
		}
		i = end - 1
	}
	if start == 0 && len(calls) == 0 {
		return nil, s
	}
	b.WriteString(s[start:])
	return calls, strings.TrimSpace(collapseBlankLines(b.String()))
}

// wireCall is one call as models write it in text.
type wireCall struct {
	ID         string          `json:"id"`
	Name       *string         `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	Function   *struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// parseCalls reads an object or an array of objects that are all calls;
// anything else is nil. A non-nil known restricts the names.
func parseCalls(text string, known map[string]bool) []ToolCall {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var list []wireCall
	if text[0] == '[' {
		if json.Unmarshal([]byte(text), &list) != nil {
			return nil
		}
	} else {
		var one wireCall
		if json.Unmarshal([]byte(text), &one) != nil {
			return nil
		}
		list = []wireCall{one}
	}
	if len(list) == 0 {
		return nil
	}
	calls := make([]ToolCall, 0, len(list))
	for _, w := range list {
		name, args := w.Name, w.Arguments
		if args == nil {
			args = w.Parameters
		}
		if w.Function != nil && name == nil {
			name, args = w.Function.Name, w.Function.Arguments
		}
		if name == nil || *name == "" || args == nil {
			return nil
		}
		if known != nil && !known[cleanName(*name, known)] {
			return nil
		}
		calls = append(calls, ToolCall{ID: w.ID, Name: *name, Arguments: args})
	}
	return calls
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

func collapseBlankLines(s string) string { return blankLines.ReplaceAllString(s, "\n\n") }

// textCallIDs numbers the calls ExtractTextCalls takes out of the text.
var textCallIDs atomic.Int64

// ExtractTextCalls re-reads a reply without tool calls for calls written
// as text — bare {"name","arguments"} objects included — to any of names:
// tools the caller can run but did not offer in the request (Chat only
// takes bare objects for the offered ones, so any other JSON in a closing
// text is left alone). The calls are normalized as Chat normalizes them;
// those to a tool not in offered carry a ProblemUnknownTool for the
// caller to accept or refuse; calls to the control tools do not count
// toward MaxToolCalls (Request.Control). A reply with calls, or with none
// in its text, is returned as is.
func ExtractTextCalls(resp Response, offered, names []string, control ...string) Response {
	if len(resp.ToolCalls) > 0 || resp.Content == "" {
		return resp
	}
	all := make(map[string]bool, len(offered)+len(names))
	for _, n := range append(slices.Clone(offered), names...) {
		all[n] = true
	}
	calls, rest := extractCalls(resp.Content, all)
	if len(calls) == 0 {
		return resp
	}
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call_text_" + strconv.FormatInt(textCallIDs.Add(1), 10)
		}
	}
	resp.ToolCalls, resp.Content = calls, rest
	resp.Repairs = append(slices.Clone(resp.Repairs), fmt.Sprintf("took %d tool call(s) to tools not offered out of the text", len(calls)))
	known := make(map[string]bool, len(offered))
	for _, n := range offered {
		known[n] = true
	}
	ctl := make(map[string]bool, len(control))
	for _, n := range control {
		ctl[n] = true
	}
	var next int
	out, _ := normalize(resp, known, ctl, &next)
	return out
}
