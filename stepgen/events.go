package stepgen

// Event names of the events this package adds to planner's.
const (
	EventThought = "thought"
	EventAnswer  = "answer"
	EventLLM     = "llm"
	EventReplan  = "replan"
)

// ThoughtEvent is what the model said beside its tool calls: its reasoning
// (DeepSeek reasoning_content, a <think> block) or its text.
type ThoughtEvent struct {
	Event string `json:"event"`
	Host  string `json:"host"`
	Phase int    `json:"phase,omitempty"`
	Text  string `json:"text"`
}

// AnswerEvent is the model's text without tool calls: it closes a phase
// (adaptive) or is the final answer (Final).
type AnswerEvent struct {
	Event string `json:"event"`
	Host  string `json:"host"`
	Phase int    `json:"phase,omitempty"`
	Text  string `json:"text"`
	Final bool   `json:"final,omitempty"`
}

// LLMEvent is the model usage of a run.
type LLMEvent struct {
	Event            string `json:"event"`
	Calls            int    `json:"calls"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

// ReplanEvent says the rest of the plan was replaced because a phase could
// not succeed.
type ReplanEvent struct {
	Event  string `json:"event"`
	Host   string `json:"host"`
	Phase  int    `json:"phase"`
	Reason string `json:"reason"`
}

// Name implements planner.Event.
func (*ThoughtEvent) Name() string { return EventThought }

// Name implements planner.Event.
func (*AnswerEvent) Name() string { return EventAnswer }

// Name implements planner.Event.
func (*LLMEvent) Name() string { return EventLLM }

// Name implements planner.Event.
func (*ReplanEvent) Name() string { return EventReplan }
