package stepgen

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
)

// replanMarker starts a phase's closing text when the model says the phase
// cannot succeed.
const replanMarker = "REPLAN:"

// adaptive plans the task, then runs each phase: requests offering the
// step tools until the model answers without a tool call. A phase the
// model says cannot succeed (its text starts with "REPLAN:") replaces the
// rest of the plan once; a second time ends the run.
func (r *runner) adaptive(ctx context.Context, task string) error {
	pl := &planner.LLMPlanner{Chat: r.chat}
	lp, err := pl.Plan(ctx, task, r.cfg.Environment)
	if err != nil {
		return err
	}
	plan := lp.Plan
	plan.Name = "task"
	r.res.Plan = plan
	r.emitPlan(plan)
	var closed []string // closing text of each phase done
	replanned := false
	for i := 0; i < len(plan.Phases); i++ {
		ph := plan.Phases[i]
		r.exec.SetPhase(ph.Phase)
		r.phaseNow = phaseInfo(ph)
		r.emit(&planner.PhaseEvent{Event: planner.EventPhase, Host: r.cfg.Host, PhaseInfo: phaseInfo(ph)})
		text, err := r.phase(ctx, task, plan, ph, closed)
		if err != nil {
			return err
		}
		if reason, ok := strings.CutPrefix(strings.TrimSpace(text), replanMarker); ok {
			reason = strings.TrimSpace(reason)
			if replanned {
				return fmt.Errorf("phase %d (%s) cannot succeed: %s", ph.Phase, ph.Goal, oneLine(reason, 300))
			}
			replanned = true
			r.emit(&ReplanEvent{Event: EventReplan, Host: r.cfg.Host, Phase: ph.Phase, Reason: reason})
			np, err := pl.Replan(ctx, task, r.cfg.Environment, plan, ph, reason, r.exec.Vars().Summary(r.cfg.SummaryBudget))
			if err != nil {
				return err
			}
			rest := np.Plan.Phases
			for j := range rest {
				rest[j].Phase = ph.Phase + 1 + j
			}
			plan.Phases = append(plan.Phases[:i+1:i+1], rest...)
			closed = append(closed, fmt.Sprintf("Phase %d could not succeed: %s", ph.Phase, reason))
			r.emitPlan(plan)
			continue
		}
		closed = append(closed, fmt.Sprintf("Phase %d (%s): %s", ph.Phase, ph.Goal, text))
		r.res.Answer = text
	}
	return nil
}

func (r *runner) emitPlan(plan *planner.Plan) {
	pe := &planner.PlanEvent{Event: planner.EventPlan, Host: r.cfg.Host, Session: r.cfg.Session, Plan: plan.Name}
	for _, ph := range plan.Phases {
		pe.Phases = append(pe.Phases, phaseInfo(ph))
	}
	r.emit(pe)
}

func phaseInfo(ph planner.Phase) planner.PhaseInfo {
	return planner.PhaseInfo{Phase: ph.Phase, Goal: ph.Goal, Description: ph.Description, SuccessCriteria: ph.SuccessCriteria}
}

// phase asks for steps until the model answers without a tool call, and
// returns that text. Each request is bounded: the system prompt holds the
// summary of everything run so far, and only the last round's tool calls
// and their replies follow it verbatim.
func (r *runner) phase(ctx context.Context, task string, plan *planner.Plan, ph planner.Phase, closed []string) (string, error) {
	var exchange []llm.Message // the last round: assistant message and its tool replies
	for round := 1; ; round++ {
		if round > r.cfg.MaxRounds {
			return "", fmt.Errorf("%w: phase %d (%s) still not done after %d requests", ErrMaxRounds, ph.Phase, ph.Goal, r.cfg.MaxRounds)
		}
		msgs := []llm.Message{
			{Role: llm.RoleSystem, Content: r.phasePrompt(task, plan, ph, closed)},
			{Role: llm.RoleUser, Content: phaseInstruction(ph, round)},
		}
		msgs = append(msgs, exchange...)
		resp, err := r.chat.Chat(ctx, llm.Request{Messages: msgs, Tools: r.tools})
		if err != nil {
			return "", err
		}
		r.thought(ph.Phase, resp)
		if len(resp.ToolCalls) == 0 {
			text := strings.TrimSpace(resp.Content)
			if text == "" {
				text = "(phase closed without a summary)"
			}
			r.emit(&AnswerEvent{Event: EventAnswer, Host: r.cfg.Host, Phase: ph.Phase, Text: text, Final: ph.Phase == len(plan.Phases)})
			return text, nil
		}
		replies, err := r.runCalls(ctx, resp)
		if err != nil {
			return "", err
		}
		exchange = append([]llm.Message{llm.AssistantMessage(resp)}, replies...)
	}
}

func (r *runner) phasePrompt(task string, plan *planner.Plan, ph planner.Phase, closed []string) string {
	var b strings.Builder
	b.WriteString(stepRules)
	fmt.Fprintf(&b, "\n## Execution environment\n%s\n", r.cfg.Environment)
	fmt.Fprintf(&b, "\n## Task\n%s\n", task)
	b.WriteString("\n## Plan\n")
	for _, p := range plan.Phases {
		mark := "  "
		if p.Phase == ph.Phase {
			mark = "→ "
		}
		fmt.Fprintf(&b, "%s%d. %s\n", mark, p.Phase, p.Goal)
	}
	if len(closed) > 0 {
		b.WriteString("\n## Phases done\n")
		for _, c := range closed {
			b.WriteString(oneLine(c, 600) + "\n")
		}
	}
	fmt.Fprintf(&b, "\n## Current phase %d: %s\n", ph.Phase, ph.Goal)
	if ph.Description != "" {
		fmt.Fprintf(&b, "Description: %s\n", ph.Description)
	}
	if ph.SuccessCriteria != "" {
		fmt.Fprintf(&b, "Success criteria: %s\n", ph.SuccessCriteria)
	}
	fmt.Fprintf(&b, "\n## Execution history and variables\n%s", r.exec.Vars().Summary(r.cfg.SummaryBudget))
	return b.String()
}

func phaseInstruction(ph planner.Phase, round int) string {
	if round == 1 {
		return fmt.Sprintf("Work on phase %d: %s. Call 1-3 tools for its next steps. When its success criteria are met, "+
			"answer without a tool call: a short summary of the result. If it cannot succeed, answer %s followed by why.",
			ph.Phase, ph.Goal, replanMarker)
	}
	return fmt.Sprintf("Continue phase %d from the results above: call the next 1-3 tools, or answer without a tool call when it is done.", ph.Phase)
}

// stepRules is the fixed part of the step requests' system prompt (the
// adaptive-execution spec's step generation prompt, for function calling).
const stepRules = `You are a command-line agent that completes tasks on a host by calling tools, a few steps at a time.
Rules:
- Call 1 to 3 tools per reply; they run in order and you see every result before the next reply.
- Every tool accepts, beside its own parameters: "description" (what the step does), "save_output_as"
  (a variable that receives the output: stdout for commands, the content for read_file, true/false for
  check_condition) and "condition" (run the step only if this expression over variables is true, e.g.
  "script_output.strip() == '1'"; a false condition skips the step).
- "{{name}}" inside a parameter is replaced by the variable's value. "last" holds the latest result
  (last.stdout, last.stderr, last.exit_code, last.success).
- A failed step is not the end: read the error and correct course. A step denied by the safety policy
  did not run; do not repeat it unchanged.
- Do not repeat a step that already succeeded; use the history below.
- When the current phase is done, answer without calling a tool.
`
