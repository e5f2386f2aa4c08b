package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

// RunPlan runs plan on every host. The plan should have been validated
// against every name a host may have (PresetVars).
func (b *Batch) RunPlan(ctx context.Context, plan *planner.Plan) BatchResult {
	b.start = time.Now()
	results := b.each(ctx, b.o.Hosts, func(ctx context.Context, h *batchHost, res *HostResult) error {
		res.How = "plan"
		var sum executor.Summary
		var err error
		if b.o.Resume != nil {
			sum, err = h.h.ResumePlan(ctx, plan, *b.o.Resume)
		} else {
			sum, err = h.h.RunPlan(ctx, plan)
		}
		res.Steps = sum.Steps
		if sum.Success {
			res.Status = event.HostOK
		} else {
			res.Err = sum.Text()
		}
		return err
	})
	return b.finish(results)
}

// PresetVars are the variable names every host of the batch may have
// before a step runs: --var, inventory_hostname, group_names and the
// inventory's variables, for planner.Validate.
func (b *Batch) PresetVars() []string {
	seen := map[string]bool{"inventory_hostname": true, "group_names": true}
	for _, kv := range b.o.Vars {
		if k, _, ok := strings.Cut(kv, "="); ok {
			seen[k] = true
		}
	}
	for _, t := range b.o.Hosts {
		for k := range t.Vars {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BatchTask is a task with the model on every host of a batch.
type BatchTask struct {
	Task string
	Opts TaskOptions
	// Chat returns the model client for a host's work and a func that
	// releases it (its transcript); the clients may share connections.
	Chat func(host string) (planner.Chatter, func())
	// PlanOnce does the task with the model on the first host that can be
	// reached and replays its steps on the others (see replay).
	PlanOnce bool
	// Planned, when set, is called with the first host's result once the
	// task succeeded there, before the replay (--save-plan).
	Planned func(stepgen.Result)
}

// RunTask does t on every host: with the model on each, or with
// PlanOnce on the first and replayed on the others.
func (b *Batch) RunTask(ctx context.Context, t BatchTask) BatchResult {
	b.start = time.Now()
	if !t.PlanOnce {
		return b.finish(b.each(ctx, b.o.Hosts, func(ctx context.Context, h *batchHost, res *HostResult) error {
			r, err := b.runTask(ctx, h, t, false)
			res.How = string(t.Opts.Mode)
			if res.How == "" {
				res.How = string(stepgen.ModeAdaptive)
			}
			taskResult(res, r)
			return err
		}))
	}
	return b.finish(b.planOnce(ctx, t))
}

// runTask does the task with the model on h. With replayed, h is the first
// host of --plan-once: the model is told (in the environment text every
// request carries) that its steps will run on the other hosts too.
func (b *Batch) runTask(ctx context.Context, h *batchHost, t BatchTask, replayed bool) (stepgen.Result, error) {
	chat, release := t.Chat(h.t.Name)
	defer release()
	o := t.Opts
	if replayed {
		env, err := stepgen.Environment(ctx, h.h.StepTransport())
		if err != nil {
			return stepgen.Result{}, err
		}
		o.Environment = env + "\n\n" + replayNote(h, len(b.o.Hosts))
	}
	if b.o.Resume != nil {
		return h.h.ResumeTask(ctx, chat, o, t.Task, *b.o.Resume)
	}
	return h.h.RunTask(ctx, chat, o, t.Task)
}

// replayNote tells the model on --plan-once's first host that its steps
// are replayed on the others, and which variables carry what differs.
func replayNote(h *batchHost, hosts int) string {
	var names []string
	for k := range h.h.Vars().Vars() {
		if !HiddenVar(k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf("This is host %s, the first of %d hosts of a batch run: the steps you run here will be "+
		"replayed unchanged on the other hosts, templates filled from each host's own variables. Never write "+
		"a value of this host (its name, address, IPs, or anything else that may differ per host) into a "+
		"step's parameters: write {{inventory_hostname}} or the variable that holds it ({{name}}) instead. "+
		"Host variables: %s.", h.t.Name, hosts, strings.Join(names, ", "))
}

// taskResult fills res from a task's result.
func taskResult(res *HostResult, r stepgen.Result) {
	res.Steps += r.Steps
	res.LLMCalls += r.Usage.Calls
	if r.Success {
		res.Status, res.Err = event.HostOK, ""
		return
	}
	res.Status = event.HostFailed
	res.Err = r.Summary.Text()
	if r.Denied > 0 && r.Err == nil {
		res.Err += "; denied steps needed approval (--approve)"
	}
}
