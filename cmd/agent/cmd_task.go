package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/stepgen"
)

// taskOptions are the flags of `agent -c TASK` (and of the REPL and batch
// runs, which do tasks the same way).
type taskOptions struct {
	task       string
	mode       string
	model      string
	baseURL    string
	maxSteps   int
	approve    string
	json       bool
	dryRun     bool
	savePlan   string // --save-plan FILE: the steps that ran, as a plan file
	transcript string // --transcript FILE: every message exchanged, JSON lines
	// sendSecrets (--send-secrets): step outputs go to the model without
	// taking out what looks like a secret.
	sendSecrets bool
	batch       batchOptions
	limits      limitOptions // --allow-write, --read-only
}

// batchOptions select hosts from an inventory (batch.go).
type batchOptions struct {
	inv      inventoryFlags // -i FILE… and the vault passwords
	limit    string         // --limit PATTERN
	forks    int
	planOnce bool
	out      string // --out DIR
	shard    string // --shard K/N
}

// defaultForks is how many hosts a batch run works on at once.
const defaultForks = 10

func (o *taskOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.task, "command", "c", "", "do `TASK` (plain language) with the model, then exit")
	fs.StringVar(&o.mode, "mode", "adaptive", "`MODE` of the task loop: adaptive (plan phases, a few steps at a time) or react")
	fs.StringVar(&o.model, "model", "", "the model `NAME` (default: AGENT_MODEL, the config file, the provider's default)")
	fs.StringVar(&o.baseURL, "base-url", "", "an OpenAI-compatible endpoint `URL`, e.g. http://localhost:11434/v1")
	fs.IntVar(&o.maxSteps, "max-steps", stepgen.DefaultMaxSteps, "stop after `N` steps")
	fs.StringVar(&o.approve, "approve", "", "`MODE` for risky steps: ask, never, medium or all (default: ask on a terminal, never otherwise)")
	fs.BoolVar(&o.json, "json", false, "print one JSON event per line on stdout instead of the terminal view")
	fs.BoolVar(&o.dryRun, "dry-run", false, "run safe steps only; show medium and high ones without running them")
	fs.StringVar(&o.savePlan, "save-plan", "", "write the steps that ran to `FILE` as a plan for `agent run`")
	fs.StringVar(&o.transcript, "transcript", "", "append every message exchanged with the model to `FILE` (JSON lines, exactly what was sent)")
	fs.BoolVar(&o.sendSecrets, "send-secrets", false, "send step outputs to the model with what looks like a secret left in (default: [REDACTED:NAME]; inventory secrets are withheld all the same)")
	o.batch.addFlags(fs)
	o.limits.addFlags(fs)
}

func (o *batchOptions) addFlags(fs *pflag.FlagSet) {
	o.inv.addFlags(fs, "run on the hosts of the Ansible inventory `SOURCE`")
	fs.StringVar(&o.limit, "limit", "", "select the inventory's hosts matching `PATTERN` (Ansible's: web:&prod, web:!db, ~regex…)")
	fs.IntVar(&o.forks, "forks", defaultForks, "work on `N` hosts at once")
	fs.BoolVar(&o.planOnce, "plan-once", false, "with -i: do the task with the model on the first host, replay its steps on the others")
	fs.StringVar(&o.out, "out", "", "with -i: write per-host logs and transcripts under `DIR`")
	fs.StringVar(&o.shard, "shard", "", "with -i: work on part `K/N` of the selected hosts (1 ≤ K ≤ N; by host name, so N controllers split one inventory)")
}

// taskRunner does tasks with the model on one host: what `agent -c` and
// each REPL line share — the engine's conversation (one executor, so later
// tasks see what earlier ones found), rendered, with the spinner.
type taskRunner struct {
	a      *app
	o      taskOptions
	client *llm.Client
	steps  *hostRun
	conv   *engine.Conversation
	close  []func()
}

// newTaskRunner checks the options, resolves the model's configuration and
// connects to the host. The caller must Close it.
func (a *app) newTaskRunner(ctx context.Context, o taskOptions) (_ *taskRunner, err error) {
	mode, err := stepgen.ParseMode(o.mode)
	if err != nil {
		return nil, usagef("--mode: %v", err)
	}
	if o.maxSteps <= 0 {
		return nil, usagef("--max-steps must be positive")
	}
	policy, fileLLM, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	cfg, err := llm.Resolve(llm.Config{Model: o.model, BaseURL: o.baseURL}, os.Getenv, fileLLM)
	if err != nil {
		return nil, usageError{err}
	}
	if err := checkDefaultModel(ctx, o, fileLLM, cfg); err != nil {
		return nil, err
	}
	t := &taskRunner{a: a, o: o}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	opts := []llm.Option{llm.WithRetryHook(func(attempt int, wait time.Duration, err error) {
		t.spinner().hide(func() {
			fmt.Fprintf(a.stderr, "agent: model: %v; retrying in %s\n", err, wait.Round(10*time.Millisecond))
		})
	})}
	a.secretSet().Add("API_KEY", cfg.APIKey, redact.Known)
	topts, closeT, err := transcriptOptions(o.transcript, a.secretSet())
	if err != nil {
		return nil, err
	}
	t.close = append(t.close, closeT)
	t.client = llm.New(cfg, append(opts, topts...)...)
	// `agent -c` is recorded as a session (agent resume); the REPL is not.
	var start *session.Start
	if o.task != "" {
		start = &session.Start{Kind: session.KindTask, Task: a.secretSet().String(o.task), Model: cfg.Model}
	}
	// "a=always" holds for one task (the REPL forgets it between tasks).
	if t.steps, err = a.openHost(ctx, policy, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun, start: start, recordNeeds: o.savePlan != "",
		search: searchOptions(t.client)}, nil,
		safety.WithScope(safety.ScopeTask)); err != nil {
		return nil, err
	}
	t.close = append(t.close, t.steps.Close)
	if r, ok := t.steps.render.(*termRenderer); ok {
		r.afterStep = "Observing…" // the model is next
		r.cost = func(prompt, completion int) string { return llmCost(fileLLM, cfg.Model, prompt, completion) }
	}
	var chat planner.Chatter = t.client
	if sp := t.spinner(); sp != nil {
		chat = thinkingChatter{next: t.client, spin: sp}
	}
	t.conv = &engine.Conversation{Host: t.steps.Host, Chat: chat,
		Opts: engine.TaskOptions{Mode: mode, MaxSteps: o.maxSteps, SendSecrets: sendSecrets(o, fileLLM)}}
	t.setPrompter(nil)
	return t, nil
}

// spinner is the terminal view's spinner, nil without one.
func (t *taskRunner) spinner() *spinner {
	if t.steps == nil {
		return nil
	}
	if r, ok := t.steps.render.(*termRenderer); ok {
		return r.spin
	}
	return nil
}

// setPrompter sets who answers when the approval mode asks a person: p, or
// when p is nil the terminal as openHost set up; either way the spinner
// stops while the question is on screen. Call it before the first task.
func (t *taskRunner) setPrompter(p safety.Prompter) {
	ap := t.steps.Approver()
	if ap.Mode() != safety.ModeAsk {
		return
	}
	if p == nil {
		p = ap.Prompter()
	}
	if p != nil {
		if q, ok := p.(quietPrompter); ok {
			p = q.next
		}
		ap.SetPrompter(quietPrompter{next: p, spin: t.spinner()})
	}
}

// Close releases the connection and the files, last opened first.
func (t *taskRunner) Close() {
	for i := len(t.close) - 1; i >= 0; i-- {
		if t.close[i] != nil {
			t.close[i]()
		}
	}
}

// run does one task and renders its summary.
func (t *taskRunner) run(ctx context.Context, task string) (stepgen.Result, error) {
	res, err := t.conv.Run(ctx, task)
	t.steps.render.finish(res.Summary)
	return res, err
}

// shell runs the operator's own command (the REPL's !command) without the
// model: the step's output is shown in full as it comes, then its status.
// ok: it ran and exited 0; denied: the safety policy or the operator
// refused it.
func (t *taskRunner) shell(ctx context.Context, command string) (ok, denied bool, err error) {
	if r, isTerm := t.steps.render.(*termRenderer); isTerm {
		full, after := r.full, r.afterStep
		r.full, r.afterStep = true, ""
		defer func() { r.full, r.afterStep = full, after }()
	}
	res, err := t.conv.Shell(ctx, command)
	return res.Status == execctx.StatusOK, res.Status == execctx.StatusDenied, err
}

// runTask is `agent -c TASK`: the model drives the task through the tools
// and the safety machinery on the host (stepgen), the same executor as
// `agent run`; with -i, on every selected host of an inventory.
func runTask(ctx context.Context, a *app, o taskOptions) error {
	if o.batch.inv.given() {
		return runBatchTask(ctx, a, o)
	}
	t, err := a.newTaskRunner(ctx, o)
	if err != nil {
		return err
	}
	defer t.Close()
	var res stepgen.Result
	if a.resume != nil {
		res, err = t.steps.ResumeTask(ctx, t.conv.Chat, t.conv.Opts, o.task, a.resume.Resume)
		t.steps.render.finish(res.Summary)
	} else {
		res, err = t.run(ctx, o.task)
	}
	a.endRecord(ctx, t.steps.rec, res.Success && err == nil)
	if o.savePlan != "" {
		if serr := savePlan(a.stderr, o.savePlan, res, nil); serr != nil && err == nil {
			err = serr
		}
	}
	return taskExit(ctx, res, err)
}

// taskExit maps how a task ended to agent's exit status.
func taskExit(ctx context.Context, res stepgen.Result, err error) error {
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, llm.ErrNoModelConfig):
		return usageError{err}
	case (errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrNotFound)) && !anyStepRan(res):
		// a rejected key or an unknown model is a configuration error
		return usageError{err}
	case err != nil:
		return err
	case res.Success:
		return nil
	case res.Denied > 0:
		return exitError{code: exitDenied}
	}
	return exitError{code: exitFailed}
}

// anyStepRan says whether a step of res was carried out (ok or failed).
func anyStepRan(res stepgen.Result) bool {
	for _, rs := range res.Ran {
		if rs.Status == execctx.StatusOK || rs.Status == execctx.StatusError {
			return true
		}
	}
	return false
}

// checkDefaultModel is the OpsAI spec's first-run behaviour: with no model
// configured anywhere agent tries the local Ollama default, and when that
// does not answer (or lacks the model) it says at once, before connecting
// to the host, how to install Ollama or configure a provider, instead of
// retrying. It is a configuration error (exit 2): nothing ran.
func checkDefaultModel(ctx context.Context, o taskOptions, file *llm.FileConfig, cfg llm.Config) error {
	flags := llm.Config{Model: o.model, BaseURL: o.baseURL}
	if !strings.HasPrefix(configSources(flags, os.Getenv, file, cfg).provider, "default") {
		return nil
	}
	err := llm.New(cfg).Probe(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, llm.ErrUnreachable):
		return usagef("cannot connect to the default LLM endpoint (Ollama at %s).\n\n"+
			"Please either:\n"+
			"  1. Install Ollama: curl -fsSL https://ollama.com/install.sh | sh\n"+
			"     then: ollama pull %s\n"+
			"  2. Configure a provider: agent config set-llm\n"+
			"     (or set DEEPSEEK_API_KEY, or OPENAI_API_KEY, in the environment)", cfg.BaseURL, cfg.Model)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return usageError{err}
}

// sendSecrets is --send-secrets, or llm.send_secrets in the config file.
func sendSecrets(o taskOptions, file *llm.FileConfig) bool {
	return o.sendSecrets || file != nil && file.SendSecrets
}
