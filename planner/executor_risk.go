package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// classification is the risk of a resolved step and what it acts on.
type classification struct {
	risk    safety.Assessment
	command string // the shell line a Commander runs
	path    string // the resolved remote file of a file tool
	// show is the file as a person approving the step should see it:
	// "~/notes.txt → /etc/x" when a symbolic link leads elsewhere, the
	// operator's file of a transfer; "" when path says it all.
	show string
	// local is the operator-side file of a transfer, resolved.
	local string
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
		return e.classifyFile(ctx, c, safety.FileRead, str("file_path"))
	case tools.WriteFileName:
		return e.classifyFile(ctx, c, safety.FileWrite, str("file_path"))
	case tools.EditFileName:
		return e.classifyFile(ctx, c, safety.FileEdit, str("file_path"))
	case tools.UploadFileName, tools.DownloadFileName:
		return e.classifyTransfer(ctx, c, tool == tools.UploadFileName, str("remote_path"), str("local_path"))
	}
	c.risk = safety.Assessment{Level: safety.Medium, Reasons: []string{tool + ": tool not known to the risk classifier"}}
	return c, nil
}

// classifyFile classifies op on file as written and on the file it really
// is on the target, following symbolic links (the transports write and
// read through them), taking the worse.
func (e *Executor) classifyFile(ctx context.Context, c classification, op safety.FileOp, file string) (classification, error) {
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
	real, err := e.realPath(ctx, resolved)
	if err != nil {
		return c, err
	}
	if real != resolved {
		c.show = file + " → " + real
		c.risk.Reasons = append(c.risk.Reasons, fmt.Sprintf("%s is a symbolic link to %s", file, real))
		if _, ra, err := e.cfg.Policy.CheckPath(op, real, home); err == nil {
			c.risk = worse(c.risk, ra)
		}
	}
	return c, nil
}

// classifyTransfer classifies upload_file (up) or download_file: the
// remote file as classifyFile does, the operator's file against the
// operator's home (what upload reads, what download writes), at least
// medium.
func (e *Executor) classifyTransfer(ctx context.Context, c classification, up bool, remote, local string) (classification, error) {
	remoteOp, localOp, why := safety.FileRead, safety.FileWrite, fmt.Sprintf("download_file: writes %s on this machine", local)
	if up {
		remoteOp, localOp, why = safety.FileWrite, safety.FileRead, fmt.Sprintf("upload_file: copies %s from this machine to the host", local)
	}
	c, err := e.classifyFile(ctx, c, remoteOp, remote)
	if err != nil || c.refused != nil {
		return c, err
	}
	abs, la, err := e.classifyLocal(localOp, local)
	if err != nil {
		c.refused = fmt.Errorf("local_path: %w", err)
		return c, nil
	}
	c.local, c.risk = abs, worse(c.risk, la)
	if c.show == "" {
		c.show = c.path
	}
	c.show += "; local: " + abs
	if c.risk.Level < safety.Medium {
		c.risk.Level = safety.Medium
	}
	c.risk.Reasons = append(c.risk.Reasons, why)
	return c, nil
}

// classifyLocal resolves a transfer's local_path as the tool does ("~" is
// the operator's home, a relative path is relative to the working
// directory) and classifies op on it and on where its symbolic links
// lead, written from "~" when under the operator's home.
func (e *Executor) classifyLocal(op safety.FileOp, p string) (string, safety.Assessment, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", safety.Assessment{}, fmt.Errorf("local home directory: %w", err)
	}
	base := home
	if !strings.HasPrefix(p, "~") && !filepath.IsAbs(p) {
		if base, err = os.Getwd(); err != nil {
			return "", safety.Assessment{}, fmt.Errorf("local working directory: %w", err)
		}
	}
	abs, err := safety.ResolvePath(p, base)
	if err != nil {
		return "", safety.Assessment{}, err
	}
	home = path.Clean(home)
	fromHome := func(f string) string {
		if rel, ok := strings.CutPrefix(f, home+"/"); ok && home != "/" {
			return "~/" + rel
		}
		return f
	}
	a := e.cfg.Policy.ClassifyFile(op, fromHome(abs))
	if real := localRealPath(abs); real != abs {
		a = worse(a, e.cfg.Policy.ClassifyFile(op, fromHome(real)))
		a.Reasons = append(a.Reasons, fmt.Sprintf("%s is a symbolic link to %s", abs, real))
	}
	return abs, a, nil
}

// localRealPath follows the symbolic links of p on this machine as
// `readlink -f` does: for a missing file, those of its directory; for a
// link to a missing file, where it leads (a write creates that file).
// When p cannot be resolved it is returned as is.
func localRealPath(p string) string {
	if r, err := local.RealPath(p); err == nil {
		return r
	}
	return p
}

// realPather is an optional capability of a transport: where a path
// really is on the host, every symbolic link followed, without running a
// command (transport/local and transport/ssh have it). It must resolve as
// `readlink -f` does: the last name may be missing (its directory is still
// resolved), and so may the target of a link at the end.
type realPather interface {
	RealPath(ctx context.Context, path string) (string, error)
}

// realPath asks the target where file really is: through the transport's
// RealPath where it has one, else with `readlink -f` (GNU and busybox; for
// a missing file it still resolves the directory), a process on the host
// for every file step. When that fails, file is returned as is (the file
// tool will fail the same way: a directory on the way is missing); the
// error is only a done ctx.
func (e *Executor) realPath(ctx context.Context, file string) (string, error) {
	if rp, ok := e.cfg.Transport.(realPather); ok {
		real, err := rp.RealPath(ctx, file)
		if cerr := ctx.Err(); cerr != nil {
			return "", cerr
		}
		if err != nil || !cleanAbs(real) {
			return file, nil
		}
		return real, nil
	}
	res, err := e.cfg.Transport.Run(ctx, transport.Command{Command: "readlink -f -- " + tools.Quote(file)})
	if cerr := ctx.Err(); cerr != nil {
		return "", cerr
	}
	if err != nil || res.ExitCode != 0 {
		return file, nil
	}
	real := trimNewline(res.Stdout)
	if !cleanAbs(real) {
		return file, nil
	}
	return real, nil
}

// cleanAbs reports whether p is a clean absolute path on one line.
func cleanAbs(p string) bool {
	return p != "" && path.IsAbs(p) && path.Clean(p) == p && !strings.ContainsAny(p, "\x00\n")
}

// worse merges two assessments: the higher level, both reasons.
func worse(a, b safety.Assessment) safety.Assessment {
	out := safety.Assessment{Level: max(a.Level, b.Level)}
	out.Reasons = append(append(out.Reasons, a.Reasons...), b.Reasons...)
	return out
}
