package executor

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/autoshell/agent/safety"
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
// per executor (bounded: linkSearchDepth deep, maxProtectedLinks links;
// the same round trip as the hard links, hardlinkfloor.go) and a write
// at, under or above where one leads is high. A link made
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

// linkTargetFloor raises c to high when one of the files the step writes
// (reals gives where they really are) is another hard link of a file in
// the home (hardLinkFloor, kernel or not: its rules are paths, and
// another name of ~/.bashrc is not under ~/.bashrc) or, with the
// classifier alone, where a symbolic link in a protected place of the
// home leads. Both come from one probe of the host (homeLinks), made
// only when it can matter: a write in the home, or the classifier alone.
func (e *Executor) linkTargetFloor(ctx context.Context, c classification, tr transport.Transport, v *hostView, reals func() ([]string, error)) (classification, error) {
	if c.risk.Level >= safety.High || !e.mediumUnattended() || v.home == "" {
		return c, nil
	}
	rs, err := reals()
	if err != nil || len(rs) == 0 {
		return c, err
	}
	// What the home's probe cannot reach is asked about itself
	// (unseenlinks.go).
	if c, err = e.unseenLinksFloor(ctx, c, v, rs); err != nil || c.risk.Level >= safety.High {
		return c, err
	}
	inHome := slices.ContainsFunc(rs, func(r string) bool { return strings.HasPrefix(r, v.home+"/") })
	alone := e.classifierAlone(ctx, tr)
	if !inHome && !alone {
		return c, nil // a step writing nowhere in the home pays no round trip
	}
	links, err := e.homeLinks(ctx, v)
	if err != nil {
		return c, err
	}
	if c = hardLinkFloor(c, links, v.home, rs); c.risk.Level >= safety.High || !alone {
		return c, nil
	}
	for _, r := range rs {
		if link := linkTargetHit(links.sym, r); link != "" {
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
