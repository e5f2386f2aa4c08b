package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the conversation.
type Message struct {
	Role    string
	Content string
	// Reasoning is the model's chain of thought (DeepSeek reasoning_content).
	// It goes back to the endpoint only on assistant messages that carry
	// tool calls: DeepSeek's thinking mode rejects a history without it there
	// (400), and every server ignores it or never produced it elsewhere.
	Reasoning  string
	ToolCalls  []ToolCall // assistant
	ToolCallID string     // tool
}

// ToolCall is a call the model asked for. After Normalize, ID is unique and
// Arguments is a JSON object.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Tool is a function offered to the model. Parameters is a JSON Schema of
// type "object".
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidateTool checks what the Chat Completions API checks: the name
// pattern and an object schema.
func ValidateTool(t Tool) error {
	if !toolName.MatchString(t.Name) {
		return fmt.Errorf("%w: name %q must match ^[a-zA-Z0-9_-]{1,64}$", ErrInvalidTool, t.Name)
	}
	var schema struct {
		Type       any             `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if len(bytes.TrimSpace(t.Parameters)) == 0 {
		return fmt.Errorf("%w: %s: parameters missing: want a JSON Schema object", ErrInvalidTool, t.Name)
	}
	if err := json.Unmarshal(t.Parameters, &schema); err != nil {
		return fmt.Errorf("%w: %s: parameters are not a JSON object: %v", ErrInvalidTool, t.Name, err)
	}
	if schema.Type != "object" {
		return fmt.Errorf("%w: %s: parameters must have \"type\": \"object\", not %v", ErrInvalidTool, t.Name, schema.Type)
	}
	if len(schema.Properties) > 0 && schema.Properties[0] != '{' {
		return fmt.Errorf("%w: %s: \"properties\" must be an object", ErrInvalidTool, t.Name)
	}
	return nil
}

// AssistantMessage is the history entry for a (normalized) reply: its text,
// its tool calls, and its reasoning (sent back only with tool calls, see
// Message.Reasoning).
func AssistantMessage(r Response) Message {
	m := Message{Role: RoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls}
	if len(r.ToolCalls) > 0 {
		m.Reasoning = r.Reasoning
	}
	return m
}

// ToolMessage is the reply to one tool call.
func ToolMessage(callID, content string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Content: content}
}

// ValidateHistory checks what real APIs reject with 400: unknown roles, an
// assistant tool call without exactly one tool reply right after it (before
// the next non-tool message), a tool reply without a preceding call, and
// empty or duplicate call ids in one assistant message.
func ValidateHistory(msgs []Message) error {
	pending := map[string]bool{} // ids of the last assistant message still unanswered
	var order []string
	unanswered := func(at int) error {
		for _, id := range order {
			if pending[id] {
				return fmt.Errorf("%w: message %d: tool call %q has no tool reply", ErrHistory, at, id)
			}
		}
		return nil
	}
	answered := map[string]bool{}
	for i, m := range msgs {
		if m.Role != RoleTool {
			if err := unanswered(i); err != nil {
				return err
			}
			pending, order, answered = map[string]bool{}, nil, map[string]bool{}
		}
		switch m.Role {
		case RoleSystem, RoleUser:
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Errorf("%w: message %d: tool call %q has no id", ErrHistory, i, tc.Name)
				}
				if pending[tc.ID] {
					return fmt.Errorf("%w: message %d: duplicate tool call id %q", ErrHistory, i, tc.ID)
				}
				if !toolName.MatchString(tc.Name) {
					return fmt.Errorf("%w: message %d: tool call %q has an invalid name %q", ErrHistory, i, tc.ID, tc.Name)
				}
				pending[tc.ID] = true
				order = append(order, tc.ID)
			}
		case RoleTool:
			switch {
			case answered[m.ToolCallID]:
				return fmt.Errorf("%w: message %d: second tool reply to %q", ErrHistory, i, m.ToolCallID)
			case !pending[m.ToolCallID]:
				return fmt.Errorf("%w: message %d: tool reply to %q, which the preceding assistant message did not call", ErrHistory, i, m.ToolCallID)
			}
			pending[m.ToolCallID], answered[m.ToolCallID] = false, true
		default:
			return fmt.Errorf("%w: message %d: unknown role %q", ErrHistory, i, m.Role)
		}
	}
	return unanswered(len(msgs))
}
