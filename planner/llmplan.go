package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/autoshell/agent/llm"
)

// SubmitPlanName is the one tool of the planning request (DESIGN.md, "LLM
// wire protocol").
const SubmitPlanName = "submit_plan"

// MaxPhases bounds the phases a model may plan.
const MaxPhases = 10

// planAttempts is how many submit_plan calls a planning request may take
// before the planner falls back to one phase holding the whole task.
const planAttempts = 2

// Chatter is the part of *llm.Client the planner and the step generator
// use.
type Chatter interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// SubmitPlanTool is the submit_plan function offered to the model. Its
// schema holds what a phase needs: a goal and success criteria (a
// description besides said the goal again, in every plan's completion
// and every phase request). It is in every adaptive request (a phase may
// close with REPLAN: and a new plan), so it is kept short: ParseLLMPlan
// numbers the phases itself and still accepts the description,
// task_type, complexity and phase numbers models add.
func SubmitPlanTool() llm.Tool {
	return llm.Tool{
		Name:        SubmitPlanName,
		Description: fmt.Sprintf("Phases in order (at most %d); later, the phases replacing the rest.", MaxPhases),
		Parameters: json.RawMessage(`{"type":"object","properties":{"phases":{"type":"array","items":{"type":"object","properties":{` +
			`"goal":{"type":"string"},` +
			`"success_criteria":{"type":"string"}},` +
			`"required":["goal"]}}},"required":["phases"]}`),
	}
}

// LLMPlan is the model's plan for a task.
type LLMPlan struct {
	Plan       *Plan
	TaskType   string
	Complexity string
	// First is the accepted planning reply without its submit_plan calls
	// when it also carried other calls (LLMPlanner.First): the first
	// phase's steps, for the caller to run and answer. Its ToolCalls are
	// empty otherwise.
	First llm.Response
	// Fallback: the model gave no usable plan, and Plan is one phase
	// holding the whole task.
	Fallback bool
	// Problem says what was wrong with the model's plan when Fallback.
	Problem string
}

// LLMPlanner turns a task into phases with one submit_plan call.
type LLMPlanner struct {
	Chat Chatter
	// First, when set, lets the planning reply (Plan, not Replan) start
	// the first phase: its tools are offered beside submit_plan, its
	// Rules close the system prompt, and the calls to them come back in
	// LLMPlan.First.
	First *FirstPhase
}

// FirstPhase is what the planning request offers for the first phase's
// steps.
type FirstPhase struct {
	// Tools are offered beside submit_plan; they may hold it, where the
	// caller's step requests have it.
	Tools []llm.Tool
	// Control names tools of Tools that steer the loop (phase_done): they
	// do not count toward llm.MaxToolCalls, nor does submit_plan.
	Control []string
	// Rules tell the model how to call Tools.
	Rules string
	// Head, when set, begins the system prompt instead of the planner's
	// own opening, and holds Rules, the environment and the task: the
	// caller's step requests begin with the same bytes, and with the same
	// tools (Tools, then submit_plan), so that a provider's prompt cache
	// serves that beginning from the second request on.
	Head string
}

// Plan asks the model for the task's phases. env describes the target
// host. A plan the model gets wrong (no call, bad arguments, no phases, a
// phase without a goal, too many phases) is answered with a tool error and
// asked for again once; after that the task becomes a single phase, so a
// weak model still gets to work. The error is the client's (the endpoint
// failed) or ctx's.
//
// With First set the request offers the first phase's tools too and lets
// the model choose which to call ("required"); the calls beside an
// accepted submit_plan come back in LLMPlan.First, with their problems.
// Calls beside a refused plan are answered "not run" in the retry.
func (p *LLMPlanner) Plan(ctx context.Context, task, env string) (LLMPlan, error) {
	sys, user := planSystemPrompt(env), "Task: "+task
	switch {
	case p.First != nil && p.First.Head != "":
		sys, user = p.First.Head+headPlanning, "Plan the task."
	case p.First != nil:
		sys = firstPhasePrompt(env, p.First.Rules)
	}
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: sys},
		{Role: llm.RoleUser, Content: user},
	}
	return p.ask(ctx, task, msgs, p.First)
}

// Replan asks for new phases to replace those after done (the phases that
// finished), because phase failed for reason. summary is what has been done
// so far. The new phases are numbered after done.
func (p *LLMPlanner) Replan(ctx context.Context, task, env string, plan *Plan, failed Phase, reason, summary string) (LLMPlan, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n\nThe plan so far:\n", task)
	for _, ph := range plan.Phases {
		fmt.Fprintf(&b, "%d. %s\n", ph.Phase, ph.Goal)
	}
	fmt.Fprintf(&b, "\nPhase %d (%s) cannot succeed: %s\n\nWhat has been done:\n%s\n", failed.Phase, failed.Goal, reason, summary)
	b.WriteString("Submit a new plan for the rest of the task, starting from the current state; do not repeat what already succeeded.")
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: planSystemPrompt(env)},
		{Role: llm.RoleUser, Content: b.String()},
	}
	return p.ask(ctx, task, msgs, nil)
}

func (p *LLMPlanner) ask(ctx context.Context, task string, msgs []llm.Message, first *FirstPhase) (LLMPlan, error) {
	req := llm.Request{Tools: []llm.Tool{SubmitPlanTool()}, ToolChoice: SubmitPlanName}
	if first != nil {
		// a named tool_choice would forbid the other calls; submit_plan
		// where first.Tools has it (the step requests' order), else last
		req.Tools = first.Tools
		if !slices.ContainsFunc(first.Tools, func(t llm.Tool) bool { return t.Name == SubmitPlanName }) {
			req.Tools = append(slices.Clip(first.Tools), SubmitPlanTool())
		}
		req.ToolChoice = "required"
		req.Control = append([]string{SubmitPlanName}, first.Control...)
	}
	problem := ""
	for attempt := 1; attempt <= planAttempts; attempt++ {
		req.Messages = msgs
		resp, err := p.Chat.Chat(ctx, req)
		if err != nil {
			return LLMPlan{}, fmt.Errorf("planning: %w", err)
		}
		msgs = append(msgs, llm.AssistantMessage(resp))
		if len(resp.ToolCalls) == 0 {
			problem = "the model answered without calling submit_plan"
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "Call submit_plan with the phases of the plan."})
			continue
		}
		var plan LLMPlan
		var planErr error
		taken := false
		var others []llm.ToolCall // calls to the first phase's tools
		for _, tc := range resp.ToolCalls {
			if tc.Name != SubmitPlanName && first != nil {
				others = append(others, tc)
				continue
			}
			reply := "plan accepted"
			switch pr, bad := resp.ProblemFor(tc.ID); {
			case bad:
				reply = llm.ToolError(pr)
			case taken:
				reply = "error: only one submit_plan call is used; this one was ignored"
			default:
				taken = true
				plan, planErr = ParseLLMPlan(tc.Arguments)
				if planErr != nil {
					reply = "error: " + planErr.Error() + ". Call submit_plan again with a corrected plan."
				}
			}
			msgs = append(msgs, llm.ToolMessage(tc.ID, reply))
		}
		if taken && planErr == nil {
			if len(others) > 0 {
				plan.First = firstReply(resp, others)
			}
			return plan, nil
		}
		for _, tc := range others {
			msgs = append(msgs, llm.ToolMessage(tc.ID, "error: not run: the plan was not accepted. Submit the plan first; phase 1's steps may come with it."))
		}
		problem = "no submit_plan call"
		if planErr != nil {
			problem = planErr.Error()
		}
	}
	return LLMPlan{
		Plan:     &Plan{Phases: []Phase{{Phase: 1, Goal: task, SuccessCriteria: "the task is done"}}},
		Fallback: true, Problem: problem,
	}, nil
}

// firstReply is resp with only the calls others (and their problems).
func firstReply(resp llm.Response, others []llm.ToolCall) llm.Response {
	out := resp
	out.ToolCalls = others
	out.Problems = nil
	for _, tc := range others {
		if pr, bad := resp.ProblemFor(tc.ID); bad {
			out.Problems = append(out.Problems, pr)
		}
	}
	return out
}

// ErrLLMPlan is wrapped by ParseLLMPlan's errors.
var ErrLLMPlan = errors.New("unusable plan")

// ParseLLMPlan reads and validates submit_plan arguments: at least one and
// at most MaxPhases phases, each with a goal. Phases are renumbered 1…N in
// the order given (models miscount); text fields are trimmed.
func ParseLLMPlan(args json.RawMessage) (LLMPlan, error) {
	var in struct {
		TaskType   string `json:"task_type"`
		Complexity string `json:"complexity"`
		Phases     []struct {
			Goal            string `json:"goal"`
			Description     string `json:"description"`
			SuccessCriteria any    `json:"success_criteria"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return LLMPlan{}, fmt.Errorf("%w: arguments do not match the schema: %v", ErrLLMPlan, err)
	}
	if len(in.Phases) == 0 {
		return LLMPlan{}, fmt.Errorf("%w: no phases", ErrLLMPlan)
	}
	if len(in.Phases) > MaxPhases {
		return LLMPlan{}, fmt.Errorf("%w: %d phases, at most %d allowed", ErrLLMPlan, len(in.Phases), MaxPhases)
	}
	out := LLMPlan{Plan: &Plan{}, TaskType: strings.TrimSpace(in.TaskType), Complexity: strings.TrimSpace(in.Complexity)}
	for i, ph := range in.Phases {
		goal := strings.TrimSpace(ph.Goal)
		if goal == "" {
			return LLMPlan{}, fmt.Errorf("%w: phase %d has no goal", ErrLLMPlan, i+1)
		}
		out.Plan.Phases = append(out.Plan.Phases, Phase{
			Phase: i + 1, Goal: goal, Description: strings.TrimSpace(ph.Description),
			SuccessCriteria: criteriaText(ph.SuccessCriteria),
		})
	}
	return out, nil
}

// criteriaText accepts success criteria as a string or a list of strings
// (models write both).
func criteriaText(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case []any:
		var parts []string
		for _, x := range v {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, strings.TrimSpace(s))
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

func planSystemPrompt(env string) string {
	return `You are the planner of a command-line agent that runs tools (shell commands, file reads, writes and edits) on a host.
Break the user's task into a few phases (usually 1-4; simple tasks need one or two). Each phase has a concrete goal
and success criteria that the results of its steps can show. Do not write the steps themselves:
another call chooses them, phase by phase, seeing the results. Call submit_plan exactly once.

Execution environment:
` + env
}

// headPlanning follows FirstPhase.Head in the planning prompt.
const headPlanning = `
## Planning
Call submit_plan once with the phases (1-4, fewer for a simple task), each a concrete goal and success criteria
its steps' results can show; start phase 1 in the same reply.
`

// firstPhasePrompt is the planning prompt when the reply may start the
// first phase; rules say how to call its tools.
func firstPhasePrompt(env, rules string) string {
	return `You are the planner of a command-line agent that runs tools (shell commands, file reads, writes and edits) on a host.
Break the user's task into a few phases (usually 1-4; simple tasks need one or two). Each phase has a concrete goal
and success criteria that the results of its steps can show. Call submit_plan exactly once.
In the same reply, after submit_plan, start phase 1: call 1-3 of the other tools for its first steps. Later phases'
steps are chosen later, seeing the results.
` + rules + `
Execution environment:
` + env
}
