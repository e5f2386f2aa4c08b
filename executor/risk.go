package executor

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// classification is the risk of a resolved step and what it acts on.
type classification struct {
	risk    safety.Assessment
	command string // the shell line a Commander runs
	// parsed is command parsed once, in each dialect /bin/sh may read it
	// as, for every analysis of the step (classify and classifyResolved).
	parsed *safety.Command
	path   string // the resolved remote file of a file tool
	// files are the files a file tool acts on, remote and local, and how
	// (safety.Touch, the step's one vocabulary for a file).
	files []safety.Touch
	// show is the file as a person approving the step should see it:
	// "~/notes.txt → /etc/x" when a symbolic link leads elsewhere, the
	// operator's file of a transfer; "" when path says it all.
	show string
	// refused is a path the policy refuses whatever the approval (a ".."
	// escape, an empty path): the step fails without running.
	refused error
	// undo is the files a medium or high command writes that the undo
	// journal saves before it runs (planShellUndo).
	undo []savedFile
	// analysis is what the classifier found in a command line.
	analysis safety.Analysis
	// resolved are the files of the command whose links on the host lead
	// elsewhere (classifyResolved): Real where they really are.
	resolved []safety.Touch
}

// remote are the files on the host among fs.
func remote(fs []safety.Touch) []safety.Touch {
	var out []safety.Touch
	for _, f := range fs {
		if !f.Local {
			out = append(out, f)
		}
	}
	return out
}

// localPath is the operator's file of a transfer, "" when none.
func (c classification) localPath() string {
	f, _ := localFile(c.files)
	return f.Path
}

// localFile is the operator's file of a transfer, if any.
func localFile(fs []safety.Touch) (safety.Touch, bool) {
	for _, f := range fs {
		if f.Local {
			return f, true
		}
	}
	return safety.Touch{}, false
}

// classify decides the risk of a prepared step: the command line a
// tools.Commander hands to the shell, analysed with the step's one home
// (safety.Policy.Analyze; a medium command whose file changes undo could
// not take back is high); the files a tools.Toucher declares, each
// against the policy's path rules where it really is (on the host, or on
// this machine for a transfer's local file), at least the level the tool
// declares. A tool that is neither is medium: not known. The error is
// infrastructure (the home directory could not be found).
//
// A step that runs as another user through become is classified for that
// user: "~" is its home and symbolic links are followed as it sees them;
// its files are classified as the login user sees them too and the worse
// level counts, so become never lowers a level. The reasons say who the
// step runs as.
func (e *Executor) classify(ctx context.Context, p *prepared) (classification, error) {
	c, err := e.classifyOn(ctx, p, p.view)
	if err != nil || c.refused != nil || p.as == "" {
		return c, err
	}
	if p.tr != e.cfg.Transport && c.command == "" && c.path != "" {
		home, herr := e.homeDir(ctx)
		login, err := e.classifyOn(ctx, p, e.newHostView(e.cfg.Transport, home, herr))
		if err != nil {
			return c, err
		}
		if login.refused == nil && login.risk.Level > c.risk.Level {
			c.risk.Level = login.risk.Level
			c.risk.Reasons = append(c.risk.Reasons, login.risk.Reasons...)
		}
	}
	c.risk.Reasons = append(c.risk.Reasons, "runs as "+p.as+" (become, through sudo)")
	return c, nil
}

// classifyOn is classify for the user v sees the host as.
func (e *Executor) classifyOn(ctx context.Context, p *prepared, v *hostView) (classification, error) {
	var c classification
	call := p.call
	if line, ok, err := call.CommandLine(); ok {
		if err != nil {
			c.refused = err
			return c, nil
		}
		if err := ctx.Err(); err != nil {
			return c, err
		}
		c.command, c.parsed = line, safety.ParseCommand(line)
		// Paths under the step user's home are its "~/…" too (a HOME
		// outside /home); without it, "~" and /home/USER still are.
		c.analysis = e.cfg.Policy.AnalyzeParsed(c.parsed, v.home)
		c.risk = c.analysis.Assessment
		touches := c.analysis.Touches
		// A command high only because it could not be taken back (rm -r)
		// may be lowered once journaled: its links are followed too.
		if c.analysis.IfJournaled.Level < safety.High && len(touches) > 0 {
			if c, err = e.classifyResolved(ctx, c, v, p.cwd); err != nil {
				return c, err
			}
		}
		if e.cfg.Journal != nil && c.risk.Level >= safety.Medium {
			owners := slices.ContainsFunc(c.analysis.Programs, func(p string) bool {
				return path.Base(p) == "chown" || path.Base(p) == "chgrp"
			})
			targets, gap, err := e.planShellUndo(ctx, v, touches, p.cwd, owners)
			if err != nil {
				return c, err
			}
			if len(c.analysis.Unjournaled) > 0 && gap == nil {
				gap = &undoGap{"it runs " + c.analysis.Unjournaled[0] + ", whose file changes cannot be known before it runs"}
			}
			c.undo = targets
			if gap != nil && (c.risk.Level == safety.Medium || c.analysis.IfJournaled.Level < c.risk.Level) {
				// Medium means reversible; a command high only because it
				// could not be taken back says why it still cannot.
				c.risk.Level = safety.High
				c.risk.Reasons = append(slices.Clip(c.risk.Reasons), "undo could not take it back: "+gap.why)
			}
			if gap == nil && c.analysis.IfJournaled.Level < c.risk.Level {
				// High only because it could not be taken back (rm -r,
				// chmod -R): the journal saves everything it changes first.
				c.risk = c.analysis.IfJournaled
				c.risk.Reasons = append(slices.Clip(c.risk.Reasons), "undo journals what it changes before it runs: "+
					strings.Join(targetPaths(targets), ", "))
			}
			if dot := newHomeDotName(v.home, targets); dot != "" && c.risk.Level < safety.High {
				// A new dot-name directly in ~ may be a start-up or
				// configuration file some program reads: refused at
				// medium, as the kernel's rules refuse it (levelrules.go
				// makes room for plain names only). With the classifier
				// alone, `cp f ~/.profile2` ran at --approve medium.
				c.risk.Level = safety.High
				c.risk.Reasons = append(slices.Clip(c.risk.Reasons), homeShort(dot, v.home)+
					": a new dot-name directly in ~ (a start-up or configuration file a program may read)")
			}
		}
		if c.risk.Level == safety.Medium && slices.ContainsFunc(touches, safety.Touch.Writes) {
			return e.linkTargetFloor(ctx, c, p.tr, v, func() ([]string, error) { return writtenReals(v, touches, c.resolved, p.cwd), nil })
		}
		return c, nil
	}
	eff, ok, err := call.Touches()
	switch {
	case !ok:
		c.risk = safety.Assessment{Level: safety.Medium, Reasons: []string{call.Name + ": tool not known to the risk classifier"}}
		return c, nil
	case err != nil:
		c.refused = err
		return c, nil
	}
	remote := false
	for _, a := range eff.Files {
		if a.Local || remote {
			continue
		}
		remote = true
		if c, err = e.classifyFile(ctx, v, c, a.Op, a.Path); err != nil || c.refused != nil {
			return c, err
		}
	}
	for _, a := range eff.Files {
		if !a.Local {
			continue
		}
		abs, la, err := e.classifyLocal(a.Op, a.Path)
		if err != nil {
			c.refused = fmt.Errorf("local_path: %w", err)
			return c, nil
		}
		c.files = append(c.files, safety.Touch{Op: a.Op, Path: abs, Real: localRealPath(abs), Local: true})
		c.risk = worse(c.risk, la)
		if c.show == "" {
			c.show = c.path
		}
		c.show += "; local: " + abs
	}
	if c.risk.Level < eff.Min {
		c.risk.Level = eff.Min
	}
	if eff.Reason != "" {
		c.risk.Reasons = append(c.risk.Reasons, eff.Reason)
	}
	if c.risk.Level >= safety.High {
		return c, nil
	}
	var reals []string
	for _, f := range c.files {
		if f.Writes() && !f.Local {
			reals = append(reals, cmp.Or(f.Real, f.Path))
		}
	}
	return e.linkTargetFloor(ctx, c, p.tr, v, func() ([]string, error) { return reals, nil })
}

// classifyFile classifies op on file as written and on the file it really
// is on the host, following symbolic links (the transports write and
// read through them), taking the worse.
func (e *Executor) classifyFile(ctx context.Context, v *hostView, c classification, op safety.FileOp, file string) (classification, error) {
	if v.homeErr != nil {
		return c, v.homeErr
	}
	resolved, a, err := e.cfg.Policy.CheckPath(op, file, v.home)
	if err != nil {
		c.refused = err
		return c, nil
	}
	c.path, c.risk = resolved, a
	real, err := v.real(ctx, resolved)
	if err != nil {
		return c, err
	}
	c.files = append(c.files, safety.Touch{Op: op, Path: resolved, Real: real})
	if real != resolved {
		c.show = file + " → " + real
		c.risk.Reasons = append(c.risk.Reasons, fmt.Sprintf("%s is a symbolic link to %s", file, real))
		if _, ra, err := e.cfg.Policy.CheckPath(op, real, v.home); err == nil {
			c.risk = worse(c.risk, ra)
		}
	}
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
	if op == safety.FileRead {
		for _, f := range []string{abs, localRealPath(abs)} {
			a = localReadFloor(e.cfg.Policy, a, f, home)
		}
	}
	if op == safety.FileWrite {
		wd, err := os.Getwd()
		if err != nil {
			return "", safety.Assessment{}, fmt.Errorf("local working directory: %w", err)
		}
		if err := localWriteRefusal(e.cfg.Policy, abs, localRealPath(abs), home, path.Clean(wd)); err != nil {
			return "", safety.Assessment{}, err
		}
		a = localWriteFloor(a, abs)
	}
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
	if r, err := transport.LocalRealPath(p); err == nil {
		return r
	}
	return p
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

// newHomeDotName returns the first of targets that the command creates
// (absent before) as a dot-name directly in home; "" when none.
func newHomeDotName(home string, targets []savedFile) string {
	if home == "" || home == "/" {
		return ""
	}
	for _, t := range targets {
		if !t.existed && t.tree == nil && path.Dir(t.Path) == home && strings.HasPrefix(path.Base(t.Path), ".") {
			return t.Path
		}
	}
	return ""
}
