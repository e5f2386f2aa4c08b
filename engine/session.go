package engine

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/session"
)

// The session record: a Host given a session.Log writes its events there,
// already scrubbed, and the variables each step set (through the same
// redaction); a step's start and end are synced to disk, so that a kill
// leaves the last step either ended or known to have been running.

// record writes what resume needs of ev to the host's session log.
func (h *Host) record(ev event.Event) {
	l := h.rec
	switch ev.Kind {
	case event.KindStepStart:
		s := ev.StepStart
		if i := slices.Index(h.recordedAhead, s.Step); i >= 0 {
			h.recordedAhead = slices.Delete(h.recordedAhead, i, i+1)
			return // written before its batch was sent
		}
		// Synced behind: the executor waits for it (Config.Durable)
		// before the step's command starts, the fsync overlapping the
		// step's confinement.
		l.WriteBehind(session.Record{R: session.RecStepStart, Host: h.Name, Phase: s.Phase, Step: s.Step, Tool: s.Tool,
			Params: s.Parameters, Command: s.Command, Path: s.Path, Risk: s.Risk})
	case event.KindStep:
		s := ev.Step
		r := session.Record{R: session.RecStep, Host: h.Name, Phase: s.Phase, Step: s.Step, Tool: s.Tool,
			Params: s.Parameters, Command: s.Command, Path: s.Path, Status: s.Status, Output: s.Output,
			Interrupted: s.Interrupted}
		if !s.DryRun {
			r.Vars = h.stepVars(s.SavedAs)
		}
		// Not synced: the next step's start record is, and its fsync
		// covers this line too; the last step is followed by a synced
		// done record. A crash in between leaves the step started and
		// not ended, which agent resume asks about (its outcome unknown).
		l.Write(r, false)
	case event.KindPlan: // the model's phases (agent resume of a task); a plan file's are in it
		l.Write(session.Record{R: session.RecPlan, Host: h.Name, Phases: ev.Plan.Phases}, true)
	case event.KindAnswer:
		if ev.Answer.Phase > 0 { // an adaptive phase closed (ReAct's final answer has none)
			l.Write(session.Record{R: session.RecAnswer, Host: h.Name, Phase: ev.Answer.Phase, Text: ev.Answer.Text}, true)
		}
	case event.KindDone:
		l.Write(session.Record{R: session.RecDone, Host: h.Name, Status: ev.Done.Status, Text: ev.Done.Summary}, true)
	}
}

// stepVars are the variables a step left: its save_output_as (when set)
// and last, their strings scrubbed of the host's secrets.
func (h *Host) stepVars(saved string) map[string]any {
	out := map[string]any{}
	for _, name := range []string{saved, execctx.LastVar} {
		if name == "" {
			continue
		}
		if v, ok := h.exec.Vars().Get(name); ok {
			out[name] = event.RedactValue(v, h.redact.String)
		}
	}
	return out
}

// usageChatter records each model call's usage in the session log.
type usageChatter struct {
	next  planner.Chatter
	log   *session.Log
	host  string
	model string
}

func (c usageChatter) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := c.next.Chat(ctx, req)
	if err == nil {
		c.log.Write(session.Record{R: session.RecLLM, Host: c.host, Model: c.model,
			PromptTokens: resp.Usage.Prompt, CompletionTokens: resp.Usage.Completion}, false)
	}
	return resp, err
}

// modelOf is the model name of chat when it says.
func modelOf(chat planner.Chatter) string {
	if c, ok := chat.(interface{ Config() llm.Config }); ok {
		return c.Config().Model
	}
	return ""
}

// restoreStep puts a recorded step back into the host's context: its
// record in the history (what the model is shown), last, and the
// variables it saved.
func (h *Host) restoreStep(st session.Record) {
	vars := h.exec.Vars()
	rec := execctx.StepRecord{Tool: st.Tool, Params: st.Params, Status: execctx.Status(st.Status), Output: st.Output}
	if last, ok := restoreValue(st.Vars[execctx.LastVar]).(map[string]any); ok {
		rec.Stdout, _ = last["stdout"].(string)
		rec.Stderr, _ = last["stderr"].(string)
		rec.ExitCode, _ = last["exit_code"].(int)
	}
	_ = vars.Record(rec) // no SaveAs: nothing to refuse
	for _, k := range slices.Sorted(maps.Keys(st.Vars)) {
		if k == execctx.LastVar {
			continue
		}
		if err := vars.Set(k, restoreValue(st.Vars[k])); err != nil {
			h.warn(fmt.Sprintf("session variable %s not restored: %v", k, err))
		}
	}
}

// restoreValue undoes what JSON did to a variable's value: whole numbers
// come back as float64, and are ints again.
func restoreValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = restoreValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = restoreValue(e)
		}
	}
	return v
}
