package testenv

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ChatRequest is a decoded chat completion request body.
type ChatRequest struct {
	Model    string        `json:"model"`
	Messages []ChatMessage `json:"messages"`
	Tools    []ChatTool    `json:"tools,omitempty"`
	// ToolChoice is kept raw: a string or a {"type":"function",…} object.
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
	Stream     bool            `json:"stream,omitempty"`
}

// ChatMessage is one message of a request. Content is kept raw: a string,
// an array of parts, null or absent.
type ChatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content,omitempty"`
	Name             string          `json:"name,omitempty"`
	ToolCalls        []ChatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
}

// Text is the message's content as text: the string, or the text parts
// joined.
func (m ChatMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ChatToolCall is a tool call on the wire. Arguments is kept raw: real
// APIs send (and require) a JSON string holding JSON.
type ChatToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ChatTool is a tool offered by a request.
type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// LastMessage returns the request's last message (zero when none).
func (r *ChatRequest) LastMessage() ChatMessage {
	if len(r.Messages) == 0 {
		return ChatMessage{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ToolNames lists the names of the tools offered.
func (r *ChatRequest) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

var (
	// toolNameRe is OpenAI's pattern for function names (with its 64
	// character limit checked apart, as the API reports it apart).
	toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	knownRoles = []string{"system", "developer", "user", "assistant", "tool", "function"}
)

// reqErr is an invalid_request_error with OpenAI's param and code; DeepSeek
// reports param null and code "invalid_request_error".
func reqErr(d Dialect, param, code, format string, args ...any) *APIError {
	e := &APIError{Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}
	if d.deepSeek() {
		e.Code = strPtr("invalid_request_error")
		return e
	}
	if param != "" {
		e.Param = strPtr(param)
	}
	if code != "" {
		e.Code = strPtr(code)
	}
	return e
}

// jsonKind names the JSON type of raw the way OpenAI's errors do.
func jsonKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return "null"
	case s[0] == '"':
		return "string"
	case s[0] == '{':
		return "object"
	case s[0] == '[':
		return "array"
	case s == "true" || s == "false":
		return "boolean"
	default:
		return "number"
	}
}

// validateChat returns the error a real API answers req with, or nil.
// The wording of each message is the one the API sends (see Dialect).
func validateChat(req *ChatRequest, d Dialect) *APIError {
	if req.Model == "" {
		return reqErr(d, "", "", "you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return reqErr(d, "messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	if req.Stream {
		return reqErr(d, "stream", "unsupported_value", "streaming not supported by the scripted server")
	}
	for i, t := range req.Tools {
		if e := validateTool(i, t, d); e != nil {
			return e
		}
	}
	if e := validateToolChoice(req, d); e != nil {
		return e
	}
	for i, m := range req.Messages {
		if e := validateMessage(i, m, d); e != nil {
			return e
		}
	}
	return validatePairing(req.Messages, d)
}

// validateToolChoice: a tool_choice needs tools, a string must be one of
// the three modes, and a named function must be among the tools (the last
// wording is ours).
func validateToolChoice(req *ChatRequest, d Dialect) *APIError {
	if jsonKind(req.ToolChoice) == "null" {
		return nil
	}
	if len(req.Tools) == 0 {
		return reqErr(d, "tool_choice", "", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
	}
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) == nil {
		if mode != "none" && mode != "auto" && mode != "required" {
			return reqErr(d, "tool_choice", "invalid_value", "Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", mode)
		}
		return nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(req.ToolChoice, &named) != nil || named.Type != "function" {
		return reqErr(d, "tool_choice", "invalid_value", "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a function.")
	}
	if !slices.Contains(req.ToolNames(), named.Function.Name) {
		return reqErr(d, "tool_choice", "invalid_value", "Invalid value for 'tool_choice': function '%s' is not among 'tools'.", named.Function.Name)
	}
	return nil
}

func validateMessage(i int, m ChatMessage, d Dialect) *APIError {
	p := fmt.Sprintf("messages[%d]", i)
	if !slices.Contains(knownRoles, m.Role) {
		return reqErr(d, p+".role", "invalid_value", "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
	}
	kind := jsonKind(m.Content)
	switch m.Role {
	case "tool":
		if m.Content == nil {
			return reqErr(d, p+".content", "missing_required_parameter", "Missing required parameter: '%s.content'.", p)
		}
		if kind != "string" {
			return reqErr(d, p+".content", "invalid_type", "Invalid type for '%s.content': expected a string, but got %s instead.", p, article(kind))
		}
		if m.ToolCallID == "" {
			return reqErr(d, p+".tool_call_id", "missing_required_parameter", "Missing required parameter: '%s.tool_call_id'.", p)
		}
	case "system", "developer", "user":
		if m.Content == nil {
			return reqErr(d, p+".content", "missing_required_parameter", "Missing required parameter: '%s.content'.", p)
		}
		if kind != "string" && kind != "array" {
			return reqErr(d, p+".content", "invalid_type", "Invalid type for '%s.content': expected one of a string or array of objects, but got %s instead.", p, article(kind))
		}
	case "assistant":
		if kind != "null" && kind != "string" && kind != "array" {
			return reqErr(d, p+".content", "invalid_type", "Invalid type for '%s.content': expected one of a string or array of objects, but got %s instead.", p, article(kind))
		}
		for j, c := range m.ToolCalls {
			cp := fmt.Sprintf("%s.tool_calls[%d]", p, j)
			switch {
			case c.ID == "":
				return reqErr(d, cp+".id", "missing_required_parameter", "Missing required parameter: '%s.id'.", cp)
			case c.Type == "":
				return reqErr(d, cp+".type", "missing_required_parameter", "Missing required parameter: '%s.type'.", cp)
			case c.Type != "function":
				return reqErr(d, cp+".type", "invalid_value", "Invalid value: '%s'. Supported values are: 'function'.", c.Type)
			case jsonKind(c.Function.Arguments) != "string":
				return reqErr(d, cp+".function.arguments", "invalid_type", "Invalid type for '%s.function.arguments': expected a string, but got %s instead.", cp, article(jsonKind(c.Function.Arguments)))
			}
			if e := validateName(cp+".function.name", c.Function.Name, d); e != nil {
				return e
			}
		}
		if e := checkReasoning(i, m, d); e != nil {
			return e
		}
	}
	return nil
}

// checkReasoning applies DeepSeek's reasoning_content rules.
func checkReasoning(i int, m ChatMessage, d Dialect) *APIError {
	switch {
	case d == DialectDeepSeekReasoner && m.ReasoningContent != nil:
		// The reasoning-model guide: "if the reasoning_content field is
		// included in the sequence of input messages, the API will return
		// a 400 error". Its wording is not documented; this is ours.
		return reqErr(d, "", "", "The reasoning_content field is not allowed in input messages (messages[%d]); remove it before sending the conversation back to deepseek-reasoner.", i)
	case d == DialectDeepSeekThinking && len(m.ToolCalls) > 0 && m.ReasoningContent == nil:
		return reqErr(d, "", "", "The `reasoning_content` in the thinking mode must be passed back to the API.")
	}
	return nil
}

func article(kind string) string {
	switch kind {
	case "null":
		return "null"
	case "object", "array":
		return "an " + kind
	}
	return "a " + kind
}

func validateName(param, name string, d Dialect) *APIError {
	switch {
	case name == "":
		return reqErr(d, param, "empty_string", "Invalid '%s': empty string. Expected a string with minimum length 1, but got an empty string instead.", param)
	case len(name) > 64:
		return reqErr(d, param, "string_above_max_length", "Invalid '%s': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", param, len(name))
	case !toolNameRe.MatchString(name):
		return reqErr(d, param, "invalid_value", "Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", param)
	}
	return nil
}

func validateTool(i int, t ChatTool, d Dialect) *APIError {
	p := fmt.Sprintf("tools[%d]", i)
	if t.Type != "function" {
		return reqErr(d, p+".type", "invalid_value", "Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)
	}
	if e := validateName(p+".function.name", t.Function.Name, d); e != nil {
		return e
	}
	params := t.Function.Parameters
	if jsonKind(params) == "null" { // parameters are optional
		return nil
	}
	bad := func(format string, args ...any) *APIError {
		return reqErr(d, p+".function.parameters", "invalid_function_parameters",
			"Invalid schema for function '%s': %s", t.Function.Name, fmt.Sprintf(format, args...))
	}
	var schema map[string]json.RawMessage
	if json.Unmarshal(params, &schema) != nil {
		return bad("%s is not of type 'object', 'boolean'.", strings.TrimSpace(string(params)))
	}
	var typ string
	json.Unmarshal(schema["type"], &typ)
	if typ != "object" {
		if typ == "" {
			typ = "None"
		}
		return bad("schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%s\"'.", typ)
	}
	return checkSchema(schema, nil, bad)
}

// checkSchema finds what OpenAI refuses inside a parameters schema: an
// array without items, properties that are not an object.
func checkSchema(schema map[string]json.RawMessage, ctx []string, bad func(string, ...any) *APIError) *APIError {
	where := "()"
	if len(ctx) > 0 {
		where = "('" + strings.Join(ctx, "', '") + "')"
	}
	var typ string
	json.Unmarshal(schema["type"], &typ)
	if typ == "array" && schema["items"] == nil {
		return bad("In context=%s, array schema missing items.", where)
	}
	if raw, ok := schema["properties"]; ok {
		var props map[string]map[string]json.RawMessage
		if json.Unmarshal(raw, &props) != nil {
			return bad("In context=%s, 'properties' must be an object of schemas.", where)
		}
		for _, name := range sortedKeys(props) {
			if e := checkSchema(props[name], append(slices.Clone(ctx), "properties", name), bad); e != nil {
				return e
			}
		}
	}
	if raw, ok := schema["items"]; ok {
		var items map[string]json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			return checkSchema(items, append(slices.Clone(ctx), "items"), bad)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validatePairing checks that every assistant tool call is answered by
// exactly one following tool message, before any other message, and that
// every tool message answers a pending call.
func validatePairing(msgs []ChatMessage, d Dialect) *APIError {
	var pending []string // ids still unanswered
	from := -1           // index of the assistant message that made them
	unanswered := func() *APIError {
		if d.deepSeek() {
			return reqErr(d, "", "", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)")
		}
		return reqErr(d, fmt.Sprintf("messages.[%d].role", from), "",
			"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(pending, ", "))
	}
	for i, m := range msgs {
		if m.Role == "tool" {
			j := slices.Index(pending, m.ToolCallID)
			if from < 0 || j < 0 {
				if d.deepSeek() {
					return reqErr(d, "", "", "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'")
				}
				return reqErr(d, fmt.Sprintf("messages.[%d].role", i), "", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = slices.Delete(pending, j, j+1)
			continue
		}
		if len(pending) > 0 {
			return unanswered()
		}
		pending, from = nil, -1
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			for _, c := range m.ToolCalls {
				pending = append(pending, c.ID)
			}
			from = i
		}
	}
	if len(pending) > 0 {
		return unanswered()
	}
	return nil
}
