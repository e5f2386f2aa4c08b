package stepgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
)

// PhaseDoneName is the tool that closes an adaptive phase in the same reply
// as its last steps (issue 17): one request per phase instead of one more
// to say "done". It is a control tool: it runs nothing and does not count
// toward the 1–3 steps of a reply.
const PhaseDoneName = "phase_done"

// phaseDoneTool is offered in every adaptive step request and in the
// planning request.
func phaseDoneTool() llm.Tool {
	return llm.Tool{
		Name:        PhaseDoneName,
		Description: "Close the phase after the steps meeting its success criteria, in their reply (refused if one failed).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string",` +
			`"description":"What it found or changed; REPLAN: why, beside submit_plan, if the phase cannot succeed; FAILED: why if the task cannot."}},"required":["summary"]}`),
	}
}

// firstPhaseRules close the planning prompt when the planning reply may
// carry the first phase's steps.
const firstPhaseRules = `Add phase_done after those steps if they complete phase 1 (honoured only if they all succeed).
`

// firstPhase is what the planning request offers for phase 1: the tools
// the task calls for (taskTools, as every step request) and phase_done.
func (r *runner) firstPhase(task string) *planner.FirstPhase {
	return &planner.FirstPhase{
		Tools:   stepRequestTools(r.offered),
		Control: []string{PhaseDoneName},
		Rules:   stepRules + r.moreTools() + firstPhaseRules,
		Head:    r.promptHead(task),
	}
}

// stepRequestTools are the tools of a step request, and of the planning
// request: the offered core tools, the control tools (phase_done, and
// submit_plan: a new plan beside a REPLAN: phase_done), then the other
// offered tools. The order keeps the beginning the same when a phase
// offers more tools than the one before: a provider's prompt cache
// serves it.
func stepRequestTools(offered []llm.Tool) []llm.Tool {
	var core, more []llm.Tool
	for _, t := range offered {
		if slices.Contains(CoreTools, t.Name) {
			core = append(core, t)
		} else {
			more = append(more, t)
		}
	}
	out := append(core, phaseDoneTool(), planner.SubmitPlanTool())
	return append(out, more...)
}

// controlTools are the tools of a step request that run no step.
var controlTools = []string{PhaseDoneName, planner.SubmitPlanName}

// replanned is the plan a reply's submit_plan calls carry when the phase
// closed with summary text beginning REPLAN: (nil otherwise, or when the
// first call's plan is unusable: the planner is then asked, as after a
// REPLAN: alone).
func replanned(resp llm.Response, text string, plans []llm.ToolCall) *planner.LLMPlan {
	if len(plans) == 0 || !strings.HasPrefix(strings.TrimSpace(text), replanMarker) {
		return nil
	}
	if _, bad := resp.ProblemFor(plans[0].ID); bad {
		return nil
	}
	lp, err := planner.ParseLLMPlan(plans[0].Arguments)
	if err != nil {
		return nil
	}
	return &lp
}

// unusedPlans answers submit_plan calls of a reply that did not close its
// phase with REPLAN:.
func unusedPlans(plans []llm.ToolCall) []llm.Message {
	var out []llm.Message
	for _, tc := range plans {
		out = append(out, llm.ToolMessage(tc.ID, "error: not used: in a phase, submit_plan replaces the rest of the plan only beside "+
			"phase_done whose summary begins "+replanMarker+" (and honoured)."))
	}
	return out
}

// splitDone takes the control calls out of resp: the steps to run, the
// phase_done calls and the submit_plan calls, each in order.
func splitDone(resp llm.Response) (steps llm.Response, done, plans []llm.ToolCall) {
	steps = resp
	steps.ToolCalls = nil
	for _, tc := range resp.ToolCalls {
		switch tc.Name {
		case PhaseDoneName:
			done = append(done, tc)
		case planner.SubmitPlanName:
			plans = append(plans, tc)
		default:
			steps.ToolCalls = append(steps.ToolCalls, tc)
		}
	}
	return steps, done, plans
}

// splitAfterDone splits resp at its first phase_done: the calls up to it
// (and every submit_plan call) stay in this phase, the others after it
// are the next phase's first steps, with their problems.
func splitAfterDone(resp llm.Response) (cur, later llm.Response) {
	cur, later = resp, resp
	cur.ToolCalls, later.ToolCalls, cur.Problems, later.Problems = nil, nil, nil, nil
	later.Content, later.Reasoning = "", "" // said once, with this phase
	seen := false
	for _, tc := range resp.ToolCalls {
		to := &cur
		if seen && tc.Name != planner.SubmitPlanName {
			to = &later
		}
		to.ToolCalls = append(to.ToolCalls, tc)
		if p, bad := resp.ProblemFor(tc.ID); bad {
			to.Problems = append(to.Problems, p)
		}
		seen = seen || tc.Name == PhaseDoneName
	}
	return cur, later
}

// notBegun answers the calls a reply gave the next phase when its
// phase_done was not honoured.
func notBegun(later llm.Response, ph planner.Phase) []llm.Message {
	var out []llm.Message
	for _, tc := range later.ToolCalls {
		out = append(out, llm.ToolMessage(tc.ID, fmt.Sprintf("error: not run: it came after phase_done, and phase %d goes on, "+
			"so the next phase has not begun.", ph.Phase)))
	}
	return out
}

// closing decides on a reply's phase_done calls, given why its steps did
// not all succeed (reasons; none when they did). When the first call is
// honoured it returns the summary and ok; otherwise one tool reply per
// call, saying why the phase goes on.
func closing(resp llm.Response, done []llm.ToolCall, reasons []string) (summary string, replies []llm.Message, ok bool) {
	for i, tc := range done {
		if i > 0 {
			replies = append(replies, llm.ToolMessage(tc.ID, "error: ignored: phase_done was called once already in this reply."))
			continue
		}
		if p, bad := resp.ProblemFor(tc.ID); bad {
			replies = append(replies, llm.ToolMessage(tc.ID, llm.ToolError(p)))
			continue
		}
		var args struct {
			Summary any `json:"summary"`
		}
		json.Unmarshal(tc.Arguments, &args) // normalized: a JSON object
		text, isText := args.Summary.(string)
		if args.Summary != nil && !isText {
			replies = append(replies, llm.ToolMessage(tc.ID, fmt.Sprintf("error: the summary of phase_done must be a string, not %v. Call it again.", args.Summary)))
			continue
		}
		if len(reasons) > 0 {
			replies = append(replies, llm.ToolMessage(tc.ID, "not done: the phase goes on, because "+strings.Join(reasons, "; ")+
				". Look at the results, then continue the phase or close it with phase_done."))
			continue
		}
		text = strings.TrimSpace(text)
		if text == "" {
			text = "(phase closed without a summary)"
		}
		return text, nil, true
	}
	return "", replies, false
}

// controlCallsBefore counts the control calls among the first i calls.
func controlCallsBefore(calls []llm.ToolCall, i int) int {
	n := 0
	for _, tc := range calls[:i] {
		if slices.Contains(controlTools, tc.Name) {
			n++
		}
	}
	return n
}
