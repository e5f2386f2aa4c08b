package executor

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Links inside the home's protected places, for the classifier alone.
// ~/.ssh/config or ~/.ssh/authorized_keys linked into ~/dotfiles (stow,
// yadm, home-manager): the kernel's rules deny the link's target where it
// really is (confine/links.go), but a host that does not enforce has only
// the classifier, which saw ~/dotfiles/ssh_config as an ordinary file: a
// medium step (edit_file, `echo >>`) added a `Match exec` line. So when
// a step that writes will run with the classifier alone at --approve
// medium (mediumUnattended), the links in the
// protected and autorun places of the home are found on the host once
// per executor (bounded: linkSearchDepth deep, maxProtectedLinks links)
// and a write at, under or above where one leads is high. A link made
// there after the first look is not seen (a medium step cannot make one;
// the kernel's rules, where they apply, are rebuilt).

const (
	linkSearchDepth   = 3
	maxProtectedLinks = 256
)

// enforcer is a Confiner that says whether its host holds unapproved
// steps with the kernel (setting itself up on first use).
type enforcer interface {
	Enforces(ctx context.Context) bool
}

// classifierAlone reports whether the commands and files of a step on tr
// are held by the classifier alone: no confiner, or a host that does not
// enforce.
func (e *Executor) classifierAlone(ctx context.Context, tr transport.Transport) bool {
	cf := e.confinerFor(tr)
	if cf == nil {
		return true
	}
	en, ok := cf.(enforcer)
	return ok && !en.Enforces(ctx)
}

// mediumUnattended reports whether medium steps run without a person
// (--approve medium) while high ones do not: only then does rating a
// write high keep it from running (by default nobody runs it, at
// --approve all it runs anyway, and a person asked sees where it writes).
func (e *Executor) mediumUnattended() bool {
	return e.cfg.Approver != nil && e.cfg.Approver.Mode() == safety.ModeMedium
}

// protectedLinks returns where the links in the home's protected places
// lead (their real paths) → the link, from "~"; looked up once per home.
func (e *Executor) protectedLinks(ctx context.Context, v *hostView) (map[string]string, error) {
	if v.tr == nil || v.homeErr != nil || v.home == "" || v.home == "/" {
		return nil, nil
	}
	if m, ok := e.plinks[v.home]; ok {
		return m, nil
	}
	var dirs []string
	for _, q := range e.cfg.Policy.LinkProbes() {
		dirs = append(dirs, v.home+q[1:])
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString("find")
	for _, d := range dirs {
		b.WriteString(" " + tools.Quote(d))
	}
	fmt.Fprintf(&b, " -maxdepth %d -type l -print0 2>/dev/null; :", linkSearchDepth)
	res, err := v.tr.Run(ctx, transport.Command{Command: b.String()})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("finding the links in the home's protected places: %w", err)
	}
	links := parseFoundLinks(res.Stdout, dirs)
	m := map[string]string{}
	if len(links) > 0 {
		reals, err := e.readlinkAll(ctx, v.tr, links)
		if err != nil {
			return nil, err
		}
		for i, r := range reals {
			if r.real != "" && r.real != links[i] {
				m[r.real] = homeShort(links[i], v.home)
			}
		}
	}
	if e.plinks == nil {
		e.plinks = map[string]map[string]string{}
	}
	e.plinks[v.home] = m
	return m, nil
}

// parseFoundLinks reads find's NUL-ended answer: the host's, so outside
// input. Only clean absolute paths at or under one of dirs are kept, at
// most maxProtectedLinks.
func parseFoundLinks(out string, dirs []string) []string {
	var links []string
	for _, l := range strings.Split(out, "\x00") {
		if len(links) == maxProtectedLinks {
			break
		}
		if l == "" || !path.IsAbs(l) || path.Clean(l) != l || slices.Contains(links, l) {
			continue
		}
		if slices.ContainsFunc(dirs, func(d string) bool { return l == d || strings.HasPrefix(l, d+"/") }) {
			links = append(links, l)
		}
	}
	return links
}

// linkTargetHit returns the protected link whose target real is, lies
// under, or holds; "" when none.
func linkTargetHit(targets map[string]string, real string) string {
	keys := make([]string, 0, len(targets))
	for t := range targets {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	for _, t := range keys {
		if real == t || strings.HasPrefix(real, t+"/") || strings.HasPrefix(t, real+"/") || real == "/" {
			return targets[t]
		}
	}
	return ""
}

// linkTargetFloor raises c to high when, with the classifier alone, one
// of the files the step writes (reals gives where they really are; it is
// called only when such links exist) is where a link in a protected place
// of the home leads.
func (e *Executor) linkTargetFloor(ctx context.Context, c classification, tr transport.Transport, v *hostView, reals func() ([]string, error)) (classification, error) {
	if c.risk.Level >= safety.High || !e.mediumUnattended() {
		return c, nil
	}
	// Hard links first, kernel or not: its rules are paths, and another
	// name of ~/.bashrc is not under ~/.bashrc.
	c, err := e.hardLinkFloor(ctx, c, v, reals)
	if err != nil || c.risk.Level >= safety.High || !e.classifierAlone(ctx, tr) {
		return c, err
	}
	targets, err := e.protectedLinks(ctx, v)
	if err != nil || len(targets) == 0 {
		return c, err
	}
	rs, err := reals()
	if err != nil {
		return c, err
	}
	for _, r := range rs {
		if link := linkTargetHit(targets, r); link != "" {
			c.risk.Level = safety.High
			c.risk.Reasons = append(slices.Clip(c.risk.Reasons), fmt.Sprintf("%s is where the protected %s leads (symbolic link): rated as that protected path", homeShort(r, v.home), link))
			return c, nil
		}
	}
	return c, nil
}

// writtenReals is where the files a command writes really are on the
// host (a pattern: its directory), as named and, for those whose links
// lead elsewhere, where they lead (resolved, from classifyResolved).
func writtenReals(v *hostView, touches, resolved []safety.Touch, cwd string) []string {
	var out []string
	for _, t := range touches {
		if !t.Writes() || notAFile(t.Path) || strings.HasPrefix(t.Path, "/proc/") || strings.Contains(t.Path, "://") {
			continue
		}
		a, err := v.abs(t.Path, cwd)
		if err != nil {
			continue // rated without a home already
		}
		out = append(out, patternDir(a))
	}
	for _, r := range resolved {
		if r.Writes() && r.Real != "" {
			out = append(out, patternDir(r.Real))
		}
	}
	return out
}

// patternDir is p, or the directory of its first pattern's name.
func patternDir(p string) string {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return path.Dir(p[:i] + "x")
	}
	return p
}
