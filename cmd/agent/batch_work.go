package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/stepgen"
)

// runBatchPlan is `agent run PLAN.yaml -i FILE`: the plan on every
// selected host. The plan is parsed and validated once, before any host is
// contacted; the inventory's variable names count as set.
func runBatchPlan(ctx context.Context, a *app, o runOptions, planPath string) error {
	if o.batch.planOnce {
		return usagef("--plan-once is for -c TASK; a plan file already runs without the model")
	}
	policy, err := a.loadPolicy()
	if err != nil {
		return err
	}
	b, err := a.openBatch(o.batch, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun}, o.vars, policy)
	if err != nil {
		return err
	}
	defer b.Close()
	// Validate against every name a host may have: --var, the batch's own
	// and the inventory's.
	preset, err := parseVars(o.vars)
	if err != nil {
		return err
	}
	for _, k := range []string{"inventory_hostname", "group_names"} {
		preset.Set(k, "")
	}
	for _, h := range b.hosts {
		for k := range h.Vars {
			if _, ok := preset.Get(k); !ok {
				preset.Set(k, "") // invalid names are left out, as hostVars does
			}
		}
	}
	plan, err := loadPlan(planPath, policy, preset)
	if err != nil {
		return err
	}
	b.out.start()
	results := b.each(ctx, b.hosts, func(ctx context.Context, h *hostRun, res *hostResult) error {
		res.How = "plan"
		sum, err := h.exec.RunPlan(ctx, plan)
		h.sink.finish(sum)
		res.Steps = sum.Steps
		if sum.Success {
			res.Status = hostOK
		} else {
			res.Err = sum.Text()
		}
		return err
	})
	return b.finish(ctx, results, 0)
}

// runBatchTask is `agent -i FILE -c TASK`: the task with the model on
// every selected host; with --plan-once, on the first host that can be
// reached, and its steps replayed on the others (see replayHost).
func runBatchTask(ctx context.Context, a *app, o taskOptions) error {
	if o.transcript != "" {
		return usagef("--transcript is for one host; with -i, --out DIR keeps one transcript per host")
	}
	if o.savePlan != "" && !o.batch.planOnce {
		return usagef("--save-plan with -i needs --plan-once (the steps of the first host are the plan)")
	}
	mode, err := stepgen.ParseMode(o.mode)
	if err != nil {
		return usagef("--mode: %v", err)
	}
	if o.maxSteps <= 0 {
		return usagef("--max-steps must be positive")
	}
	policy, fileLLM, err := a.loadConfig()
	if err != nil {
		return err
	}
	cfg, err := llm.Resolve(llm.Config{Model: o.model, BaseURL: o.baseURL}, os.Getenv, fileLLM)
	if err != nil {
		return usageError{err}
	}
	b, err := a.openBatch(o.batch, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun}, nil, policy)
	if err != nil {
		return err
	}
	defer b.Close()
	t := &batchTask{b: b, o: o, mode: mode, cfg: cfg}
	b.out.start()
	if !o.batch.planOnce {
		results := b.each(ctx, b.hosts, t.adaptive)
		return b.finish(ctx, results, sumCalls(results))
	}
	return t.planOnce(ctx)
}

// batchTask is the model's side of a batch task.
type batchTask struct {
	b    *batch
	o    taskOptions
	mode stepgen.Mode
	cfg  llm.Config
}

// newClient returns a client for host's work: its retry warnings name the
// host. The clients share the default HTTP transport and its connections.
func (t *batchTask) newClient(host string, extra []llm.Option) *llm.Client {
	opts := []llm.Option{llm.WithRetryHook(func(attempt int, wait time.Duration, err error) {
		t.b.out.warn(fmt.Sprintf("%s: model: %v; retrying in %s", printable(host), err, wait.Round(10*time.Millisecond)))
	})}
	return llm.New(t.cfg, append(opts, extra...)...)
}

// client returns the client for host h and a func that closes its
// transcript: with --out, each host has its own transcript file.
func (t *batchTask) client(h *hostRun) (*llm.Client, func()) {
	if t.b.o.out == "" {
		return t.newClient(h.host.Name, nil), func() {}
	}
	path := filepath.Join(t.b.o.out, safeFileName(h.host.Name)+".transcript.jsonl")
	opts, closeT, err := transcriptOptions(path)
	if err != nil {
		h.sink.warn(fmt.Sprintf("no transcript: %v", err))
		return t.newClient(h.host.Name, nil), func() {}
	}
	return t.newClient(h.host.Name, opts), closeT
}

// run does the task with the model on h. With replayed, h is the first
// host of --plan-once: the model is told (in the environment text every
// request carries) that its steps will run on the other hosts too.
func (t *batchTask) run(ctx context.Context, h *hostRun, replayed bool) (stepgen.Result, error) {
	client, closeT := t.client(h)
	defer closeT()
	s := h.steps
	cfg := stepgen.Config{
		LLM: client, Executor: h.exec, Mode: t.mode, Transport: s.tr,
		MaxSteps: t.o.maxSteps, Host: s.host, Session: s.session, Emit: h.sink.event,
	}
	if replayed {
		env, err := stepgen.Environment(ctx, s.tr)
		if err != nil {
			return stepgen.Result{}, err
		}
		cfg.Environment = env + "\n\n" + replayNote(h, len(t.b.hosts))
	}
	res, err := stepgen.Run(ctx, cfg, t.o.task)
	h.sink.finish(res.Summary)
	return res, err
}

// adaptive is the hostWork of a task without --plan-once.
func (t *batchTask) adaptive(ctx context.Context, h *hostRun, res *hostResult) error {
	r, err := t.run(ctx, h, false)
	res.How = string(t.mode)
	taskResult(res, r)
	return err
}

// replayNote tells the model on --plan-once's first host that its steps
// are replayed on the others, and which variables carry what differs.
func replayNote(h *hostRun, hosts int) string {
	var names []string
	for k := range h.vars {
		if !hiddenVar(k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf("This is host %s, the first of %d hosts of a batch run: the steps you run here will be "+
		"replayed unchanged on the other hosts, templates filled from each host's own variables. Never write "+
		"a value of this host (its name, address, IPs, or anything else that may differ per host) into a "+
		"step's parameters: write {{inventory_hostname}} or the variable that holds it ({{name}}) instead. "+
		"Host variables: %s.", h.host.Name, hosts, strings.Join(names, ", "))
}

// taskResult fills res from a task's result.
func taskResult(res *hostResult, r stepgen.Result) {
	res.Steps += r.Steps
	res.LLMCalls += r.Usage.Calls
	if r.Success {
		res.Status, res.Err = hostOK, ""
		return
	}
	res.Status = hostFailed
	res.Err = r.Summary.Text()
	if r.Denied > 0 && r.Err == nil {
		res.Err += "; denied steps needed approval (--approve)"
	}
}

func sumCalls(results []hostResult) int {
	n := 0
	for _, r := range results {
		n += r.LLMCalls
	}
	return n
}
