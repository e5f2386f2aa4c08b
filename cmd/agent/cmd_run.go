package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/tools"
)

// runOptions are `agent run`'s flags.
type runOptions struct {
	host hostOptions
	vars []string
	// secretVars are --secret-var k=v: variables like --var whose values
	// are secrets (hidden everywhere, left out of the session record).
	secretVars []string
	dryRun     bool
	json       bool
	approve    string
	batch      batchOptions // -i FILE, --limit, --forks, --out: the plan on every selected host
	limits     limitOptions // --allow-write, --read-only (over the plan's own permissions)
}

func (o *runOptions) addFlags(fs *pflag.FlagSet) {
	o.host.addFlags(fs)
	fs.StringArrayVar(&o.vars, "var", nil, "set variable `k=v` (repeatable; overrides the plan's vars)")
	fs.StringArrayVar(&o.secretVars, "secret-var", nil, "set variable `k=v` as --var does, its value a secret: hidden in every output, log and record in any shape (repeatable)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "run safe steps only; show medium and high ones (file changes as a diff) without running them")
	fs.BoolVar(&o.json, "json", false, "print one JSON event per line on stdout instead of the terminal view")
	fs.StringVar(&o.approve, "approve", "", "`MODE` for risky steps: ask, never, medium or all (default: ask on a terminal, never otherwise)")
	o.batch.addFlags(fs)
	o.limits.addFlags(fs)
}

// mergeBatch applies the batch flags given after the command over the
// global ones, like mergeHost.
func mergeBatch(dst *batchOptions, src batchOptions, fs *pflag.FlagSet) {
	mergeInventory(&dst.inv, src.inv, fs)
	if fs.Changed("limit") {
		dst.limit = src.limit
	}
	if fs.Changed("forks") {
		dst.forks = src.forks
	}
	if fs.Changed("plan-once") {
		dst.planOnce = src.planOnce
	}
	if fs.Changed("out") {
		dst.out = src.out
	}
	if fs.Changed("shard") {
		dst.shard = src.shard
	}
}

// mergeHost applies the host flags given after the command over the global
// ones, so both `agent --ssh-host h run p` and `agent run p --ssh-host h` work.
func mergeHost(dst *hostOptions, src hostOptions, fs *pflag.FlagSet) {
	if fs.Changed("ssh-host") {
		dst.sshHost = src.sshHost
	}
	if fs.Changed("ssh-config") {
		dst.configFile = src.configFile
	}
	if fs.Changed("user") {
		dst.user = src.user
	}
	if fs.Changed("port") {
		dst.port = src.port
	}
	if fs.Changed("identity") {
		dst.identities = append(dst.identities, src.identities...)
	}
	mergeBecome(&dst.become, src.become, fs)
}

// runRun is `agent run PLAN.yaml`: the whole plan is parsed and validated
// before anything runs (exit 2 with file:line), then run step by step on
// the host with the safety machinery of planner.Executor.
func runRun(ctx context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var o runOptions
	o.addFlags(fs)
	addEnforcementFlags(fs, a)
	a.sandbox.add(fs)
	// A plan already runs without the model: run refuses --plan-once
	// (batch_work.go), so its help does not offer it.
	_ = fs.MarkHidden("plan-once")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent run PLAN.yaml [flags]\n\nRun a saved plan's steps with the safety checks, no model.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	mergeHost(&a.host, o.host, fs)
	a.task.limits.merge(o.limits, fs) // applied by loadPolicy
	// Flags given before "run" (agent --approve medium run …) count too;
	// those after it win.
	if o.approve == "" {
		o.approve = a.task.approve
	}
	o.json = o.json || a.task.json
	o.dryRun = o.dryRun || a.task.dryRun
	batch := a.task.batch
	mergeBatch(&batch, o.batch, fs)
	o.batch = batch
	if err := batchWithoutInventory(o.batch, append(a.batchFlags, changedBatchFlags(fs)...)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("run: want one plan file (agent run PLAN.yaml [--ssh-host HOST | -i INVENTORY] [--var k=v]…)")
	}
	var err error
	if o.vars, err = a.secretVars(o.vars, o.secretVars); err != nil {
		return err
	}
	if err := checkVarsUsed(fs.Arg(0), o.vars); err != nil {
		return err
	}
	if o.batch.inv.given() {
		return runBatchPlan(ctx, a, o, fs.Arg(0))
	}
	vars, err := engine.ParseVars(o.vars)
	if err != nil {
		return err
	}
	policy, err := a.loadPolicy()
	if err != nil {
		return err
	}
	plan, err := loadPlan(fs.Arg(0), policy, vars.Vars())
	if err != nil {
		return err
	}
	if err := a.checkPlanUnchanged(fs.Arg(0)); err != nil {
		return err
	}
	planSum, err := fileSHA256(fs.Arg(0))
	if err != nil {
		return usageError{err}
	}
	start := &session.Start{Kind: session.KindRun, Plan: fs.Arg(0), PlanSHA256: planSum}
	steps, err := a.openHost(ctx, policy, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun, start: start,
		search: engine.SearchOptions{NoEmbedder: noModelSearch}}, o.vars)
	if err != nil {
		return err
	}
	defer steps.Close()
	var sum executor.Summary
	if a.resume != nil {
		sum, err = steps.ResumePlan(ctx, plan, a.resume.Resume)
	} else {
		sum, err = steps.RunPlan(ctx, plan)
	}
	a.endRecord(ctx, steps.rec, sum.Success && err == nil)
	steps.render.finish(sum)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case sum.Success:
		return nil
	case sum.Failed != nil && sum.Failed.Status == execctx.StatusDenied:
		return exitError{code: exitDenied}
	}
	return exitError{code: exitFailed}
}

// checkVarsUsed refuses a --var the plan at path neither declares in its
// vars nor uses in a template or condition: a mistyped name (log_fiel)
// would otherwise be ignored and the plan run with its default. The error
// lists the variables the plan does use. A plan that does not parse is
// left to loadPlan, which says why.
func checkVarsUsed(path string, kvs []string) error {
	if len(kvs) == 0 {
		return nil
	}
	plan, err := planner.ParseFile(path)
	if err != nil {
		return nil
	}
	used, settable := planVarNames(plan)
	for _, kv := range kvs {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || used[k] { // no "=": parseVars says what is wrong
			continue
		}
		list := "none"
		if len(settable) > 0 {
			list = strings.Join(settable, ", ")
		}
		return usagef("--var %s: %s never uses a variable of that name (the variables it uses or declares: %s)", k, path, list)
	}
	return nil
}

// planVarNames returns every variable name plan declares in vars or uses
// in a template or condition, and the sorted names a --var is meant for:
// those that no step's save_output_as sets (nor `last`).
func planVarNames(plan *planner.Plan) (used map[string]bool, settable []string) {
	used = map[string]bool{}
	for k := range plan.Vars {
		used[k] = true
	}
	saved := map[string]bool{execctx.LastVar: true}
	for _, st := range plan.Steps() {
		if st.SaveOutputAs != "" {
			saved[st.SaveOutputAs] = true
		}
		names, _ := execctx.ParamVars(st.Parameters)
		if c, _ := execctx.ConditionVars(st.Condition); st.Condition != "" {
			names = append(names, c...)
		}
		if cond, ok := st.Parameters["condition"].(string); ok && st.Tool == "check_condition" {
			c, _ := execctx.ConditionVars(cond)
			names = append(names, c...)
		}
		for _, n := range names {
			used[n] = true
		}
	}
	for k := range used {
		if _, declared := plan.Vars[k]; declared || !saved[k] {
			settable = append(settable, k)
		}
	}
	slices.Sort(settable)
	return used, settable
}

// loadPlan parses and validates the whole plan; every problem is a usage
// error (exit 2) naming file:line, and nothing has run.
func loadPlan(path string, policy safety.Policy, values map[string]any, preset ...string) (*planner.Plan, error) {
	plan, err := planner.ParseFile(path)
	if err != nil {
		return nil, usageError{err}
	}
	reg := tools.Default(policy)
	if err := planner.Validate(plan, reg, append(preset, slices.Collect(maps.Keys(values))...)); err != nil {
		return nil, usageError{err}
	}
	// Every step that can be resolved now is checked against the plan's
	// permissions before anything runs (exit 2).
	if err := executor.CheckPlanPermissions(plan, reg, policy, values); err != nil {
		return nil, usageError{err}
	}
	return plan, nil
}

// newApprovalPrompter asks on the controlling terminal (/dev/tty), so
// approvals work with stdout redirected; nil when there is none or CI is
// "true" (then nothing can be approved and risky steps are denied).
func newApprovalPrompter() (safety.Prompter, func()) {
	if os.Getenv("CI") == "true" {
		return nil, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, nil
	}
	if !isTerminal(tty) {
		tty.Close()
		return nil, nil
	}
	return &safety.LinePrompter{In: tty, Out: tty}, func() { tty.Close() }
}
