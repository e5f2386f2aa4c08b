package stepgen

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoshell/agent/event"
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
		msgs = append(msgs, r.assistant(resp))
		if len(resp.ToolCalls) == 0 {
			text := strings.TrimSpace(resp.Content)
			if text == "" {
				text = "(no answer text)"
			}
			r.res.Answer = text
			r.emit(event.Event{Kind: event.KindAnswer, Answer: &event.Answer{Text: text, Final: true}})
			if reason, ok := failedReason(text); ok {
				return fmt.Errorf("%w: %s", ErrTaskFailed, oneLine(reason, 300))
			}
			return nil
		}
		replies, _, err := r.runCalls(ctx, resp)
		if err != nil {
			return err
		}
		msgs = append(msgs, replies...)
	}
}

func reactPrompt(env string) string {
	return `You are a command-line agent: you do the user's task on a host by calling tools and reading their results,
until it is done; then you answer without a tool call, with the result (begin it with FAILED: if the task cannot be done).
Call 1-3 tools per reply. Each tool also takes "description", "save_output_as" (a variable for its output) and
"condition" (run only if this expression over variables is true). "{{x}}" in a parameter is replaced by variable x.
A failed step is an observation: correct course. Do not repeat a denied step unchanged.

Environment:
` + env
}
