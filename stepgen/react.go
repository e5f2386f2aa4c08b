package stepgen

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoshell/agent/llm"
)

// react is the ReAct loop: one conversation that grows by every reply and
// observation, the step tools, no plan; a reply without tool calls is the
// final answer. Rounds are bounded by the larger of the step and round
// limits (a round with only refused calls runs no step).
func (r *runner) react(ctx context.Context, task string) error {
	r.exec.SetPhase(1)
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: reactPrompt(r.cfg.Environment)},
		{Role: llm.RoleUser, Content: task},
	}
	limit := max(r.cfg.MaxSteps, r.cfg.MaxRounds)
	for round := 1; ; round++ {
		if round > limit {
			return fmt.Errorf("%w: no final answer after %d requests", ErrMaxRounds, limit)
		}
		resp, err := r.chat.Chat(ctx, llm.Request{Messages: msgs, Tools: r.tools})
		if err != nil {
			return err
		}
		r.thought(0, resp)
		msgs = append(msgs, llm.AssistantMessage(resp))
		if len(resp.ToolCalls) == 0 {
			text := strings.TrimSpace(resp.Content)
			if text == "" {
				text = "(no answer text)"
			}
			r.res.Answer = text
			r.emit(&AnswerEvent{Event: EventAnswer, Host: r.cfg.Host, Text: text, Final: true})
			return nil
		}
		replies, err := r.runCalls(ctx, resp)
		if err != nil {
			return err
		}
		msgs = append(msgs, replies...)
	}
}

func reactPrompt(env string) string {
	return `You are a command-line agent. You complete the user's task on a host by thinking, calling tools (Action),
and reading their results (Observation), in a loop, until the task is done; then you answer without calling a tool,
with the result for the user.
Rules:
- Call 1 to 3 tools per reply; each result comes back as a tool message.
- Every tool accepts, beside its own parameters: "description", "save_output_as" (a variable that receives the
  output) and "condition" (run only if this expression over variables is true, e.g. "out.strip() == '1'").
  "{{name}}" inside a parameter is replaced by the variable's value.
- A failed step is an observation: read the error and correct course. A step denied by the safety policy did
  not run; do not repeat it unchanged.

Execution environment:
` + env
}
