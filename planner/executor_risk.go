package planner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

// classification is the risk of a resolved step and what it acts on.
type classification struct {
	risk    safety.Assessment
	command string // the shell line a Commander runs
	path    string // the resolved remote file of a file tool
	// refused is a path the policy refuses whatever the approval (a ".."
	// escape, an empty path): the step fails without running.
	refused error
}

// classify decides the risk of a resolved step: the command line that
// execute_command and the structured tools hand to the shell, parsed by
// safety.ClassifyCommand; the resolved path of a file tool against the
// policy's path rules; transfers are at least medium; check_condition and
// sys_monitor only read variables or /proc and are safe. A tool the
// executor does not know is medium. The error is infrastructure (the home
// directory could not be found).
func (e *Executor) classify(ctx context.Context, tool string, params map[string]any) (classification, error) {
	var c classification
	t, ok := e.reg.Lookup(tool)
	if !ok {
		c.refused = fmt.Errorf("%w %q", tools.ErrUnknownTool, tool)
		return c, nil
	}
	if cmd, ok := t.(tools.Commander); ok {
		raw, err := json.Marshal(params)
		if err == nil {
			c.command, err = cmd.CommandLine(raw)
		}
		if err != nil {
			c.refused = err
			return c, nil
		}
		c.risk = e.cfg.Policy.ClassifyCommand(c.command)
		return c, nil
	}
	str := func(k string) string { s, _ := params[k].(string); return s }
	switch tool {
	case tools.CheckConditionName, tools.SysMonitorName:
		return c, nil
	case tools.ReadFileName:
		return e.classifyFile(ctx, c, safety.FileRead, str("file_path"), "")
	case tools.WriteFileName:
		return e.classifyFile(ctx, c, safety.FileWrite, str("file_path"), "")
	case tools.EditFileName:
		return e.classifyFile(ctx, c, safety.FileEdit, str("file_path"), "")
	case tools.UploadFileName:
		return e.classifyFile(ctx, c, safety.FileWrite, str("remote_path"), "upload_file: copies a file from this machine to the host")
	case tools.DownloadFileName:
		return e.classifyFile(ctx, c, safety.FileRead, str("remote_path"),
			fmt.Sprintf("download_file: writes %s on this machine", str("local_path")))
	}
	c.risk = safety.Assessment{Level: safety.Medium, Reasons: []string{tool + ": tool not known to the risk classifier"}}
	return c, nil
}

// classifyFile classifies op on file, at least medium when atLeastMedium
// gives a reason.
func (e *Executor) classifyFile(ctx context.Context, c classification, op safety.FileOp, file, atLeastMedium string) (classification, error) {
	home, err := e.homeDir(ctx)
	if err != nil {
		return c, err
	}
	resolved, a, err := e.cfg.Policy.CheckPath(op, file, home)
	if err != nil {
		c.refused = err
		return c, nil
	}
	c.path, c.risk = resolved, a
	if atLeastMedium != "" {
		if c.risk.Level < safety.Medium {
			c.risk.Level = safety.Medium
		}
		c.risk.Reasons = append(c.risk.Reasons, atLeastMedium)
	}
	return c, nil
}
