package executor

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

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
}

// needs works out what a classified call reads, writes, runs and connects
// to: a command's from its analysis, each path made absolute where the
// step runs, followed through symbolic links on the target (the link and
// where it leads must both be allowed), and a directory a command names
// counted as the tree under it (rm -r, chmod -R, grep -r act on all of
// it); a file tool's from the files it declared, as resolved.
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

// onTarget follows each path through symbolic links on the target (both
// must be allowed) and marks an existing directory as its tree.
func (e *Executor) onTarget(ctx context.Context, tr transport.Transport, in []safety.Need) ([]safety.Need, error) {
	var out []safety.Need
	for _, n := range in {
		if n.Pattern || !path.IsAbs(n.Path) {
			out = append(out, n)
			continue
		}
		real, err := e.realPath(ctx, tr, n.Path)
		if err != nil {
			return nil, err
		}
		if !n.Tree {
			if fi, err := tr.Stat(ctx, real); err == nil && fi.IsDir() {
				n.Tree = true
			} else if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
		}
		out = append(out, n)
		if real != n.Path {
			out = append(out, safety.Need{Path: real, Tree: n.Tree})
		}
	}
	return out, nil
}

// permitted returns why the declared permissions refuse the step ("" when
// they allow it) and what it needs (for --save-plan).
// tr is the transport the step runs through (the become user's, if any):
// "~" is that user's home.
func (e *Executor) permitted(ctx context.Context, tr transport.Transport, call *tools.Call, cls classification) (string, stepNeeds, error) {
	if len(e.perms) == 0 && !e.cfg.RecordNeeds {
		return "", stepNeeds{}, nil
	}
	n, err := e.needs(ctx, tr, call, cls)
	if err != nil || len(e.perms) == 0 {
		return "", n, err
	}
	home, err := e.homeDirOf(ctx, tr)
	if err != nil {
		return "", n, err
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
