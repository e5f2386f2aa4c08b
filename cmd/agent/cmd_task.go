package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

// taskOptions are the flags of `agent -c TASK`.
type taskOptions struct {
	task     string
	mode     string
	model    string
	baseURL  string
	maxSteps int
	approve  string
	json     bool
	dryRun   bool
}

func (o *taskOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.task, "command", "c", "", "do `TASK` (plain language) with the model, then exit")
	fs.StringVar(&o.mode, "mode", "adaptive", "`MODE` of the task loop: adaptive (plan phases, a few steps at a time) or react")
	fs.StringVar(&o.model, "model", "", "the model `NAME` (default: AGENT_MODEL, the config file, the provider's default)")
	fs.StringVar(&o.baseURL, "base-url", "", "an OpenAI-compatible endpoint `URL`, e.g. http://localhost:11434/v1")
	fs.IntVar(&o.maxSteps, "max-steps", stepgen.DefaultMaxSteps, "stop after `N` steps")
	fs.StringVar(&o.approve, "approve", "", "`MODE` for risky steps: ask, never, medium or all (default: ask on a terminal, never otherwise)")
	fs.BoolVar(&o.json, "json", false, "print one JSON event per line on stdout instead of the terminal view")
	fs.BoolVar(&o.dryRun, "dry-run", false, "run safe steps only; show medium and high ones without running them")
}

// runTask is `agent -c TASK`: the model drives the task through the tools
// and the safety machinery on the host (stepgen), the same executor as
// `agent run`.
func runTask(ctx context.Context, a *app, o taskOptions) error {
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
	steps, err := a.openSteps(ctx, policy, stepFlags{approve: o.approve, json: o.json, dryRun: o.dryRun})
	if err != nil {
		return err
	}
	defer steps.Close()
	r, tr, host, session, ecfg := steps.render, steps.tr, steps.host, steps.session, steps.exec
	client := llm.New(cfg, llm.WithRetryHook(func(attempt int, wait time.Duration, err error) {
		fmt.Fprintf(a.stderr, "agent: model: %v; retrying in %s\n", err, wait.Round(10*time.Millisecond))
	}))
	res, err := stepgen.Run(ctx, stepgen.Config{
		LLM: client, Executor: planner.NewExecutor(ecfg), Mode: mode, Transport: tr,
		MaxSteps: o.maxSteps, Host: host, Session: session, Emit: r.event,
	}, o.task)
	r.finish(res.Summary)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, llm.ErrNoModelConfig):
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
