package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/tools"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// batch is the front end of a batch run (engine.Batch): the flags, the
// questions on the terminal, the rendering and the exit status.
type batch struct {
	a       *app
	o       batchOptions
	eb      *engine.Batch
	rec     *session.Log // nil: not recorded
	out     *batchOutput
	closers []func()
}

// openBatch checks the batch flags, selects the hosts and opens what the
// hosts share. Nothing has run when it fails (usage errors exit 2).
func (a *app) openBatch(ctx context.Context, o batchOptions, f stepFlags, vars []string, policy safety.Policy) (_ *batch, err error) {
	if a.host.sshHost != "" {
		return nil, usagef("-i and --ssh-host: choose the inventory or one host")
	}
	if o.forks < 1 {
		return nil, usagef("--forks must be at least 1")
	}
	if _, err := engine.ParseVars(vars); err != nil {
		return nil, err
	}
	spec, err := o.inv.spec(ctx)
	if err != nil {
		return nil, err
	}
	hosts, err := engine.SelectHosts(spec, o.limit, a.host.overrides())
	if err != nil {
		return nil, err
	}
	a.warnInventory(hosts)
	if hosts, err = a.shard(o.shard, hosts, f.json); err != nil {
		return nil, err
	}
	bec, err := a.becomeSettings(ctx)
	if err != nil {
		return nil, err
	}
	b := &batch{a: a, o: o}
	defer func() {
		if err != nil {
			if b.rec != nil {
				b.rec.End(session.StateFailed)
			}
			b.Close()
		}
	}()
	if f.start != nil {
		st := *f.start
		st.Inventory, st.Limit, st.Hosts, st.DryRun = o.inv.sources, o.limit, len(hosts), f.dryRun
		if b.rec, err = a.openRecord(st); err != nil {
			return nil, err
		}
		b.closers = append(b.closers, b.rec.Close)
	}
	var resume *engine.Resume
	if a.resume != nil {
		resume = &a.resume.Resume
	}
	mode, prompter, closeTTY, err := resolveApproval(f.approve)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, closeTTY)
	if b.out, err = newBatchOutput(a, o.out, f.json, len(hosts)); err != nil {
		return nil, err
	}
	b.closers = append(b.closers, b.out.Close)
	if prompter != nil {
		prompter = &batchPrompter{next: prompter, out: b.out}
	}
	users := make(map[string]string, len(hosts))
	for _, h := range hosts {
		if h.SSH != nil {
			users[h.Name] = h.SSH.User
		}
	}
	approver := safety.NewApprover(mode, prompter, safety.WithScope(safety.ScopeBatch), safety.WithLogins(users))
	var hk sshtr.Prompter
	if p := newTerminalPrompter(); p != nil {
		hk = &lockedPrompter{next: p, out: b.out}
	}
	b.eb, err = engine.OpenBatch(engine.BatchOptions{
		Hosts: hosts, Forks: o.forks, Vars: vars, Redact: a.secretSet(), Policy: policy, Approver: approver, DryRun: f.dryRun,
		Dial: engine.DialOptions{SSH: sshtr.Options{Prompter: hk}}, Emit: b.out.event, Become: bec,
		Session: b.rec.ID(), Record: b.rec, Resume: resume, RecordNeeds: f.recordNeeds,
		Search: f.search,
	})
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, b.eb.Close)
	return b, nil
}

// Close releases what the hosts shared, last opened first.
func (b *batch) Close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

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
	if err := a.checkPlanUnchanged(planPath); err != nil {
		return err
	}
	planSum, err := fileSHA256(planPath)
	if err != nil {
		return usageError{err}
	}
	start := &session.Start{Kind: session.KindBatchRun, Plan: planPath, PlanSHA256: planSum}
	b, err := a.openBatch(ctx, o.batch, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun, start: start,
		search: engine.SearchOptions{NoEmbedder: noModelSearch}}, o.vars, policy)
	if err != nil {
		return err
	}
	defer b.Close()
	vars, err := engine.ParseVars(o.vars)
	if err != nil {
		return err
	}
	plan, err := loadPlan(planPath, policy, vars.Vars(), b.eb.PresetVars()...)
	if err != nil {
		b.rec.End(session.StateFailed)
		return err
	}
	b.out.start()
	return b.finish(ctx, b.eb.RunPlan(ctx, plan))
}

// runBatchTask is `agent -i FILE -c TASK`: the task with the model on
// every selected host; with --plan-once, on the first host that can be
// reached, and its steps replayed on the others (engine.BatchTask).
func runBatchTask(ctx context.Context, a *app, o taskOptions) error {
	if o.transcript != "" {
		return usagef("--transcript is for one host; with -i, --out DIR keeps one transcript per host")
	}
	if a.resume != nil && o.batch.planOnce {
		return usagef("resume: a --plan-once batch cannot be resumed yet; run the plan it saved (--save-plan) on the hosts left, with agent run")
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
	a.secretSet().Add("API_KEY", cfg.APIKey, redact.Known)
	start := &session.Start{Kind: session.KindBatchTask, Task: a.secretSet().String(o.task), Model: cfg.Model}
	b, err := a.openBatch(ctx, o.batch, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun, start: start, recordNeeds: o.savePlan != "",
		search: searchOptions(llm.New(cfg))}, nil, policy)
	if err != nil {
		return err
	}
	defer b.Close()
	b.out.cost = func(prompt, completion int) string { return llmCost(fileLLM, cfg.Model, prompt, completion) }
	t := engine.BatchTask{
		Task: o.task, Opts: engine.TaskOptions{Mode: mode, MaxSteps: o.maxSteps, SendSecrets: sendSecrets(o, fileLLM)},
		Chat:     func(host string) (planner.Chatter, func()) { return b.client(cfg, host) },
		PlanOnce: o.batch.planOnce,
	}
	// A plan asked for and not written is an error (exit 1 when the
	// hosts all succeeded), said once the hosts are done.
	var saveErr error
	if o.savePlan != "" {
		t.Planned = func(res stepgen.Result) {
			if err := savePlan(a.stderr, o.savePlan, res, b.eb.PresetVars()); err != nil {
				b.out.warn(err.Error())
				saveErr = err
			}
		}
	}
	b.out.start()
	if err := b.finish(ctx, b.eb.RunTask(ctx, t)); err != nil {
		return err
	}
	return saveErr
}

// client returns the model client for host's work and a func that closes
// its transcript: with --out, each host has its own transcript file. Its
// retry warnings name the host; the clients share the default HTTP
// transport and its connections.
func (b *batch) client(cfg llm.Config, host string) (planner.Chatter, func()) {
	opts := []llm.Option{llm.WithRetryHook(func(attempt int, wait time.Duration, err error) {
		b.out.warn(fmt.Sprintf("%s: model: %v; retrying in %s", printable(host), err, wait.Round(10*time.Millisecond)))
	})}
	if b.o.out == "" {
		return llm.New(cfg, opts...), func() {}
	}
	path := filepath.Join(b.o.out, safeFileName(host)+".transcript.jsonl")
	topts, closeT, err := transcriptOptions(path, b.a.secretSet())
	if err != nil {
		b.out.hostWarn(host, fmt.Sprintf("no transcript: %v", err))
		return llm.New(cfg, opts...), func() {}
	}
	return llm.New(cfg, append(opts, topts...)...), closeT
}

// undoCommand is the command that undoes the batch's session on the hosts
// it changed: the inventory, and the SSH flags the run was given.
func (b *batch) undoCommand() string {
	args := []string{"agent", "undo", b.eb.Session()}
	h := b.a.host
	if h.configFile != "" {
		args = append(args, "-F", tools.Quote(h.configFile))
	}
	if h.user != "" {
		args = append(args, "-l", tools.Quote(h.user))
	}
	if h.port != 0 {
		args = append(args, "-p", fmt.Sprint(h.port))
	}
	for _, id := range h.identities {
		args = append(args, "--identity", tools.Quote(id))
	}
	return strings.Join(append(args, b.o.inv.args(tools.Quote)...), " ")
}

// finish prints the summary and maps the results to agent's exit
// status: 0 when every host succeeded, 3 when some failed (or were not
// run), 130 after Ctrl-C.
func (b *batch) finish(ctx context.Context, r engine.BatchResult) error {
	ok := true
	for _, h := range r.Hosts {
		ok = ok && h.Status == event.HostOK
	}
	b.a.endRecord(ctx, b.rec, ok)
	b.out.summary(r, b.undoCommand())
	if ctx.Err() != nil {
		fmt.Fprintln(b.a.stderr, "agent: interrupted")
		return exitError{code: exitInterrupted}
	}
	for _, h := range r.Hosts {
		if h.Status != event.HostOK {
			return exitError{code: exitSomeHosts}
		}
	}
	return nil
}

// shard applies --shard K/N to the selected hosts. A part with no host
// (more parts than hosts) has nothing to do: it says so and ends the run
// with status 0 — with --json as an empty batch, which agent report counts
// as a finished part.
func (a *app) shard(spec string, hosts []engine.Target, asJSON bool) ([]engine.Target, error) {
	if spec == "" {
		return hosts, nil
	}
	sh, err := engine.ParseShard(spec)
	if err != nil {
		return nil, err
	}
	part := sh.Select(hosts)
	if len(part) > 0 {
		return part, nil
	}
	fmt.Fprintf(a.stderr, "agent: --shard %s: none of the %d selected %s is in this part; nothing to do\n", sh, len(hosts), pluralize(len(hosts), "host"))
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		if err := enc.Encode(event.Event{Kind: event.KindBatch, Batch: &event.Batch{}}); err != nil {
			return nil, err
		}
	}
	return nil, exitError{code: exitOK}
}
