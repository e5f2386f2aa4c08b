package executor

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
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

// needsOf works out what a classified step reads, writes, runs and connects
// to: a command's from its analysis (a recursive command — rm -r,
// chmod -R, cp -r, grep -r, find — needs the tree under what it names),
// each path made absolute where the step runs and followed through
// symbolic links on the host (the link and where it leads must both be
// allowed); a file tool's from the files it declared, as resolved. Every
// path is looked at through the step's view: one a step.
func needsOf(ctx context.Context, p *prepared) (stepNeeds, error) {
	var n stepNeeds
	cls := p.cls
	if cls.command != "" {
		var err error
		abs := func(path string) string {
			if err != nil {
				return path
			}
			var a string
			a, err = p.view.abs(path, p.cwd)
			return a
		}
		n.target = safety.NeedsOf(cls.analysis, abs)
		if err != nil {
			return n, err
		}
		if n.target.Reads, err = onTarget(ctx, p.view, n.target.Reads); err != nil {
			return n, err
		}
		if n.target.Writes, err = onTarget(ctx, p.view, n.target.Writes); err != nil {
			return n, err
		}
		for _, prog := range n.target.Programs {
			if !path.IsAbs(prog) {
				continue
			}
			real, err := p.view.real(ctx, prog)
			if err != nil {
				return n, err
			}
			if real != prog {
				n.target.Programs = append(n.target.Programs, real)
			}
		}
		return n, nil
	}
	for _, f := range cls.files {
		side := &n.target
		if f.Local {
			side = &n.local
		}
		for _, q := range uniq(f.Path, f.Real) {
			need := safety.Touch{Path: q}
			switch f.Op {
			case safety.FileRead:
				side.Reads = append(side.Reads, need)
			case safety.FileWrite:
				side.Writes = append(side.Writes, need)
			case safety.FileEdit:
				side.Reads = append(side.Reads, need)
				side.Writes = append(side.Writes, need)
			}
		}
	}
	if _, ok, _ := p.call.Touches(); !ok && cls.command == "" {
		n.target.Unknown = append(n.target.Unknown, p.call.Name+": a tool whose files are not known")
	}
	return n, nil
}

func uniq(a, b string) []string {
	if b == "" || a == b {
		return []string{a}
	}
	return []string{a, b}
}

// onTarget follows each path through symbolic links on the host: the
// link and where it leads must both be allowed.
func onTarget(ctx context.Context, v *hostView, in []safety.Touch) ([]safety.Touch, error) {
	var out []safety.Touch
	for _, n := range in {
		out = append(out, n)
		if n.Pattern || !path.IsAbs(n.Path) {
			continue
		}
		real, err := v.real(ctx, n.Path)
		if err != nil {
			return nil, err
		}
		if real != n.Path {
			out = append(out, safety.Touch{Path: real, Tree: n.Tree})
		}
	}
	return out, nil
}

// permissions is the stage that checks the step against the declared
// permissions (and works out what it needs, for --save-plan): "~" is the
// home of the user the step runs as.
func (e *Executor) permissions(ctx context.Context, s *stepRun) *denial {
	if len(e.perms) == 0 && !e.cfg.RecordNeeds {
		return nil
	}
	p := s.p
	n, err := needsOf(ctx, p)
	p.needs = n
	if err != nil {
		return broken(err)
	}
	if p.view.homeErr != nil {
		return broken(p.view.homeErr)
	}
	home := p.view.home
	if e.cfg.RecordNeeds {
		lh, _ := os.UserHomeDir()
		p.needs.recorded = safety.MergeNeeds(n.target.Within(home), n.local.Within(lh))
	}
	s.r.Needs, s.r.NeedsKnown = p.needs.recorded, e.cfg.RecordNeeds
	var why []string
	for _, pm := range e.perms {
		for _, r := range pm.Check(n.target, home) {
			why = append(why, fmt.Sprintf("%s (permissions of %s)", r, pm.Source))
		}
		if len(n.local.Reads)+len(n.local.Writes) > 0 {
			lh, err := os.UserHomeDir()
			if err != nil {
				return broken(fmt.Errorf("local home directory: %w", err))
			}
			for _, r := range pm.Check(n.local, lh) {
				why = append(why, fmt.Sprintf("on this machine: %s (permissions of %s)", r, pm.Source))
			}
		}
	}
	if len(why) == 0 {
		return nil
	}
	return &denial{kind: byPolicy, reason: "outside the declared permissions: " + strings.Join(why, "; ")}
}

// skippedNeeds works out what a step whose condition was false would need,
// as if it ran now: the stages up to permissions, not copies of them;
// known is false when its parameters cannot be resolved or prepared, or a
// path is refused (then nothing can be said of it).
func (e *Executor) skippedNeeds(ctx context.Context, st planner.Step) (safety.Needs, bool, error) {
	s := &stepRun{st: st}
	for _, stage := range []stage{e.prepareStage, e.classifyStage, e.permissions} {
		switch d := stage(ctx, s); {
		case d == nil:
		case d.err != nil:
			return safety.Needs{}, false, d.err
		case d.kind == byPolicy: // outside the permissions: what it needs is known
			return s.p.needs.recorded, true, nil
		default:
			return safety.Needs{}, false, nil
		}
	}
	return s.p.needs.recorded, true, nil
}

// readOnly is the --read-only stage: it refuses a step that is not safe,
// or a file tool that writes (on the host, or the operator's file a
// download writes).
func (e *Executor) readOnly(_ context.Context, s *stepRun) *denial {
	if !e.cfg.ReadOnly {
		return nil
	}
	cls := s.p.cls
	for _, f := range cls.files {
		if f.Op == safety.FileRead {
			continue
		}
		if f.Local {
			return &denial{kind: byPolicy, reason: "--read-only: file tools may not write (" + f.Path + " on this machine)"}
		}
		return &denial{kind: byPolicy, reason: "--read-only: file tools may not write (" + f.Path + ")"}
	}
	if risk := cls.risk; risk.Level > safety.Safe {
		why := "--read-only: only safe steps run; this one is " + risk.Level.String() + " risk"
		if len(risk.Reasons) > 0 {
			why += " (" + strings.Join(risk.Reasons, "; ") + ")"
		}
		return &denial{kind: byPolicy, reason: why}
	}
	return nil
}
