package stepgen

import (
	"encoding/json"
	"fmt"
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
		Name: PhaseDoneName,
		Description: "Close the current phase. Call it after the phase's last steps, in the same reply: it is honoured only if " +
			"they all succeed (a step skipped by its condition counts), else the phase goes on and you see why. " +
			"A summary beginning " + replanMarker + " or " + FailedMarker + " says the phase or the whole task cannot succeed.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string",` +
			`"description":"what the phase found or changed"}},"required":["summary"]}`),
	}
}

// firstPhaseRules close the planning prompt when the planning reply may
// carry the first phase's steps.
const firstPhaseRules = `Add phase_done after those steps if they complete phase 1 (honoured only if they all succeed).
`

// firstPhase is what the planning request offers for phase 1: the tools
// the task calls for (phaseTools without a phase) and phase_done.
func (r *runner) firstPhase(task string) *planner.FirstPhase {
	offered := r.phaseTools(task, planner.Phase{})
	return &planner.FirstPhase{
		Tools:   append(offered, phaseDoneTool()),
		Control: []string{PhaseDoneName},
		Rules:   stepRules + r.moreTools(offered) + firstPhaseRules,
	}
}

// splitDone takes the phase_done calls out of resp: the steps to run, and
// the phase_done calls in order.
func splitDone(resp llm.Response) (llm.Response, []llm.ToolCall) {
	var done []llm.ToolCall
	steps := resp
	steps.ToolCalls = nil
	for _, tc := range resp.ToolCalls {
		if tc.Name == PhaseDoneName {
			done = append(done, tc)
			continue
		}
		steps.ToolCalls = append(steps.ToolCalls, tc)
	}
	return steps, done
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

// controlCallsBefore counts the phase_done calls among the first i calls.
func controlCallsBefore(calls []llm.ToolCall, i int) int {
	n := 0
	for _, tc := range calls[:i] {
		if tc.Name == PhaseDoneName {
			n++
		}
	}
	return n
}
