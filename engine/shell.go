package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/tools"
)

// shellOutputBytes bounds the output of an operator's command kept in the
// conversation's notes: enough for the next task to refer to what it
// showed (its last lines are kept).
const shellOutputBytes = 1500

// ShellDescription is the description of an operator's own command's step
// (the REPL's `!command`), in events and the audit log.
const ShellDescription = "operator's command (REPL !)"

// Shell runs command on the host without the model, as an execute_command
// step: the same templating, safety classification, approval, audit line
// and events as any step. Its command and output join the conversation, so
// the next task's model is told what it showed. The approver's per-task
// answers are forgotten first: the command is a task of its own.
func (c *Conversation) Shell(ctx context.Context, command string) (executor.StepResult, error) {
	command = strings.TrimSpace(command)
	if command == "" {
		return executor.StepResult{}, fmt.Errorf("no command after '!'")
	}
	c.Host.Approver().NewTask()
	c.Host.exec.SetPhase(0)
	r, err := c.Host.exec.RunStep(ctx, planner.Step{Tool: tools.ExecuteCommandName, Description: ShellDescription,
		Parameters: map[string]any{"command": command}})
	e := earlierTask{task: command, shell: true, status: string(r.Status)}
	switch {
	case ctx.Err() != nil:
		e.status = "interrupted by the user"
	case err != nil:
		e.status = "failed: " + clipText(err.Error(), earlierTextBytes)
	case r.Status == "ok" || r.Status == "error":
		e.status = fmt.Sprintf("exit %d", r.Output.ExitCode)
		e.answer = tailText(c.Host.Redact(r.Observation), shellOutputBytes)
	default: // denied, or failed before running
		e.status = string(r.Status) + ": " + clipText(r.Observation, earlierTextBytes)
	}
	c.earlier = append(c.earlier, e)
	return r, err
}

// tailText is s's last n bytes (whole lines where possible), marked when
// cut; newlines are kept so that the model reads the output as it was.
func tailText(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	if i := strings.IndexByte(s[cut:], '\n'); i >= 0 && i < n/2 {
		cut += i + 1
	}
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return fmt.Sprintf("[… %d bytes before]\n%s", cut, s[cut:])
}
