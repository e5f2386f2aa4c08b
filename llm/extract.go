package llm

import (
	"encoding/json"
	"regexp"
	"strings"
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
