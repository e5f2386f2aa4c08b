package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

// TaskOptions say how to do tasks with the model.
type TaskOptions struct {
	Mode     stepgen.Mode // default adaptive
	MaxSteps int          // default stepgen.DefaultMaxSteps
	// Environment describes the target for the model; "" collects it once
	// per task through the host's connection.
	Environment string
	// SendSecrets: see stepgen.Config.
	SendSecrets bool
}

// RunTask does task with the model on the host: the model drives it
// through the tools and the safety machinery (stepgen), the same executor
// as RunPlan. The host's events go to its sink.
func (h *Host) RunTask(ctx context.Context, chat planner.Chatter, o TaskOptions, task string) (stepgen.Result, error) {
	h.Vars().BeginTask() // session_files: "these" and "previous" are by task
	if h.rec != nil {
		chat = usageChatter{next: chat, log: h.rec, host: h.Name, model: modelOf(chat)}
	}
	return stepgen.Run(ctx, stepgen.Config{
		LLM: chat, Executor: h.exec, Mode: o.Mode, Transport: h.StepTransport(), Environment: o.Environment,
		MaxSteps: o.MaxSteps, Host: h.Name, Session: h.Session, Emit: h.sink, SendSecrets: o.SendSecrets, Secrets: h.redact.Set,
	}, task)
}

// Bounds of what the model is told about a session's earlier tasks.
const (
	earlierTasks     = 5    // the newest tasks described
	earlierTextBytes = 300  // per task and answer
	earlierVars      = 20   // variables listed
	earlierVarBytes  = 100  // per variable value
	earlierFiles     = 1024 // bytes of the session's files block
)

// Conversation is a run of tasks on one host that builds on itself (the
// REPL): the target is described once, and each task's model is told what
// the earlier ones did and which variables they left (they are still set:
// one executor serves every task).
type Conversation struct {
	Host *Host
	Chat planner.Chatter
	Opts TaskOptions

	env     string
	earlier []earlierTask
}

// earlierTask is a task done earlier in the conversation.
type earlierTask struct {
	task, status, answer string
	shell                bool // the operator's own command (Shell); answer is its output
}

// Describe collects the target's description for the model once; without
// it each task collects its own.
func (c *Conversation) Describe(ctx context.Context) error {
	env, err := stepgen.Environment(ctx, c.Host.StepTransport())
	if err != nil {
		return err
	}
	c.env = env
	return nil
}

// Run does one task, with the notes on the earlier ones, and records it.
// The approver's per-task answers are forgotten first.
func (c *Conversation) Run(ctx context.Context, task string) (stepgen.Result, error) {
	c.Host.Approver().NewTask()
	o := c.Opts
	if c.env != "" {
		o.Environment = c.env + c.notes()
	}
	res, err := c.Host.RunTask(ctx, c.Chat, o, task)
	e := earlierTask{task: task, status: "success", answer: res.Answer}
	switch {
	case ctx.Err() != nil:
		e.status = "interrupted by the user"
	case err != nil:
		e.status = "failed: " + clipText(err.Error(), earlierTextBytes)
	case res.Denied > 0:
		step := "steps"
		if res.Denied == 1 {
			step = "step"
		}
		e.status = fmt.Sprintf("failed: %d %s denied by the safety policy or the user", res.Denied, step)
	case !res.Success:
		e.status = "failed"
	}
	c.earlier = append(c.earlier, e)
	return res, err
}

// Tasks is how many tasks the conversation has given the model.
func (c *Conversation) Tasks() int { return len(c.earlier) - c.Commands() }

// Commands is how many of the operator's own commands (Shell) it has run.
func (c *Conversation) Commands() int {
	n := 0
	for _, e := range c.earlier {
		if e.shell {
			n++
		}
	}
	return n
}

// notes tells the model, after the environment, what the earlier tasks
// did and which variables they left, bounded in size.
func (c *Conversation) notes() string {
	if len(c.earlier) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nEarlier tasks in this session (same host; their variables are still set):\n")
	from := max(0, len(c.earlier)-earlierTasks)
	if from > 0 {
		fmt.Fprintf(&b, "(%d older tasks not shown)\n", from)
	}
	for i, e := range c.earlier[from:] {
		if e.shell {
			fmt.Fprintf(&b, "%d. the operator ran the command %q (no model) → %s", from+i+1, clipText(e.task, earlierTextBytes), e.status)
			if e.answer != "" {
				b.WriteString("; it showed:\n" + indentLines(e.answer, "   | "))
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "%d. %s → %s", from+i+1, clipText(e.task, earlierTextBytes), e.status)
		if e.answer != "" {
			fmt.Fprintf(&b, ": %s", clipText(e.answer, earlierTextBytes))
		}
		b.WriteString("\n")
	}
	vars := c.Host.Vars().Vars()
	names := make([]string, 0, len(vars))
	for k := range vars {
		if k != "last" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		b.WriteString("Variables (use {{name}} in parameters, or in conditions):\n")
		for i, k := range names {
			if i == earlierVars {
				fmt.Fprintf(&b, "… and %d more\n", len(names)-i)
				break
			}
			fmt.Fprintf(&b, "- %s = %q\n", k, clipText(fmt.Sprint(vars[k]), earlierVarBytes))
		}
	}
	// The files earlier tasks touched, so that "that config" in a new task
	// can be resolved (the adaptive summary carries the same block).
	b.WriteString(c.Host.Vars().SessionFilesText(earlierFiles))
	return b.String()
}

// indentLines prefixes every line of s with prefix.
func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// clipText is s on one line, at most n bytes (whole runes), "…" marking a cut.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
