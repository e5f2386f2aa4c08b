package executor

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Declared permissions (a plan's `permissions:`, --allow-write) are
// checked on every resolved step after its risk is known and before it is
// approved: a step outside them is denied whatever the approval mode,
// with the permission it lacks as the reason the model is told.

// stepNeeds is what a resolved step needs of declared permissions, on the
// target and, for a transfer, on the operator's machine.
type stepNeeds struct {
	target, local safety.Needs
	// recorded is both, paths in the homes written "~/…" (RecordNeeds).
	recorded safety.Needs
}

// needs works out what a classified call reads, writes, runs and connects
// to: a command's from its analysis (a recursive command — rm -r,
// chmod -R, cp -r, grep -r, find — needs the tree under what it names),
// each path made absolute where the step runs and followed through
// symbolic links on the target (the link and where it leads must both be
// allowed); a file tool's from the files it declared, as resolved.
func (e *Executor) needs(ctx context.Context, tr transport.Transport, call *tools.Call, cls classification) (stepNeeds, error) {
	var n stepNeeds
	if cls.command != "" {
		cwd, _ := call.Params["cwd"].(string)
		var err error
		abs := func(p string) string {
			if err != nil {
				return p
			}
			var a string
			a, err = e.absolute(ctx, tr, p, cwd)
			return a
		}
		n.target = safety.NeedsOf(cls.analysis, abs)
		if err != nil {
			return n, err
		}
		if n.target.Reads, err = e.onTarget(ctx, tr, n.target.Reads); err != nil {
			return n, err
		}
		if n.target.Writes, err = e.onTarget(ctx, tr, n.target.Writes); err != nil {
			return n, err
		}
		for _, p := range n.target.Programs {
			if !path.IsAbs(p) {
				continue
			}
			real, err := e.realPath(ctx, tr, p)
			if err != nil {
				return n, err
			}
			if real != p {
				n.target.Programs = append(n.target.Programs, real)
			}
		}
		return n, nil
	}
	for _, f := range cls.ops {
		for _, p := range uniq(f.path, f.real) {
			need := safety.Need{Path: p}
			switch f.op {
			case safety.FileRead:
				n.target.Reads = append(n.target.Reads, need)
			case safety.FileWrite:
				n.target.Writes = append(n.target.Writes, need)
			case safety.FileEdit:
				n.target.Reads = append(n.target.Reads, need)
				n.target.Writes = append(n.target.Writes, need)
			}
		}
	}
	if cls.local != "" {
		need := safety.Need{Path: cls.local}
		paths := uniq(cls.local, localRealPath(cls.local))
		for _, p := range paths {
			need.Path = p
			if cls.localOp == safety.FileRead {
				n.local.Reads = append(n.local.Reads, need)
			} else {
				n.local.Writes = append(n.local.Writes, need)
			}
		}
	}
	if _, ok, _ := call.Touches(); !ok && cls.command == "" {
		n.target.Unknown = append(n.target.Unknown, call.Name+": a tool whose files are not known")
	}
	return n, nil
}

func uniq(a, b string) []string {
	if b == "" || a == b {
		return []string{a}
	}
	return []string{a, b}
}

// onTarget follows each path through symbolic links on the target: the
// link and where it leads must both be allowed.
func (e *Executor) onTarget(ctx context.Context, tr transport.Transport, in []safety.Need) ([]safety.Need, error) {
	var out []safety.Need
	for _, n := range in {
		out = append(out, n)
		if n.Pattern || !path.IsAbs(n.Path) {
			continue
		}
		real, err := e.realPath(ctx, tr, n.Path)
		if err != nil {
			return nil, err
		}
		if real != n.Path {
			out = append(out, safety.Need{Path: real, Tree: n.Tree})
		}
	}
	return out, nil
}

// tr is the transport the step runs through (the become user's, if any):
// "~" is that user's home.
func (e *Executor) permitted(ctx context.Context, tr transport.Transport, call *tools.Call, cls classification) (string, stepNeeds, error) {
	if len(e.perms) == 0 && !e.cfg.RecordNeeds {
		return "", stepNeeds{}, nil
	}
	n, err := e.needs(ctx, tr, call, cls)
	if err != nil {
		return "", n, err
	}
	home, err := e.homeDirOf(ctx, tr)
	if err != nil {
		return "", n, err
	}
	if e.cfg.RecordNeeds {
		lh, _ := os.UserHomeDir()
		n.recorded = safety.MergeNeeds(n.target.Within(home), n.local.Within(lh))
	}
	var why []string
	for _, p := range e.perms {
		for _, r := range p.Check(n.target, home) {
			why = append(why, fmt.Sprintf("%s (permissions of %s)", r, p.Source))
		}
		if len(n.local.Reads)+len(n.local.Writes) > 0 {
			lh, err := os.UserHomeDir()
			if err != nil {
				return "", n, fmt.Errorf("local home directory: %w", err)
			}
			for _, r := range p.Check(n.local, lh) {
				why = append(why, fmt.Sprintf("on this machine: %s (permissions of %s)", r, p.Source))
			}
		}
	}
	if len(why) == 0 {
		return "", n, nil
	}
	return "outside the declared permissions: " + strings.Join(why, "; "), n, nil
}

// skippedNeeds works out what a step whose condition was false would need,
// as if it ran now; known is false when its parameters cannot be resolved
// or prepared (then nothing can be said of it).
func (e *Executor) skippedNeeds(ctx context.Context, st planner.Step) (safety.Needs, bool, error) {
	params, err := e.vars.ResolveParams(st.Parameters, tools.ShellParameters[st.Tool]...)
	if err != nil {
		return safety.Needs{}, false, nil
	}
	call, err := e.reg.Prepare(st.Tool, params)
	if err != nil {
		return safety.Needs{}, false, nil
	}
	tr, as, err := e.stepTransport(st)
	if err != nil {
		return safety.Needs{}, false, nil
	}
	cls, err := e.classify(ctx, call, tr, as)
	if err != nil || cls.refused != nil {
		return safety.Needs{}, false, err
	}
	_, n, err := e.permitted(ctx, tr, call, cls)
	return n.recorded, err == nil, err
}

// readOnly says why --read-only refuses a step: one that is not safe, or a
// file tool that writes (on the target, or the operator's file a download
// writes); "" when it may run.
func (e *Executor) readOnly(risk safety.Assessment, cls classification) string {
	if !e.cfg.ReadOnly {
		return ""
	}
	for _, f := range cls.ops {
		if f.op == safety.FileWrite || f.op == safety.FileEdit {
			return "--read-only: file tools may not write (" + f.path + ")"
		}
	}
	if cls.local != "" && cls.localOp != safety.FileRead {
		return "--read-only: file tools may not write (" + cls.local + " on this machine)"
	}
	if risk.Level > safety.Safe {
		why := "--read-only: only safe steps run; this one is " + risk.Level.String() + " risk"
		if len(risk.Reasons) > 0 {
			why += " (" + strings.Join(risk.Reasons, "; ") + ")"
		}
		return why
	}
	return ""
}
