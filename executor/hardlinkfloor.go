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

// Hard links (issue 26's undo round trip of the attack corpus). A file
// in ~/work that is another name of ~/.bashrc or ~/.ssh/authorized_keys
// (the same inode: `ln`, some dotfile managers, a restore that kept
// links) is not under the protected path, so the kernel's rules, which
// are paths, let a medium step write it, and `echo KEY >> ~/work/keys`
// added a key to authorized_keys at --approve medium. Undo could not take
// back such a write either: it puts back a copy under the name written,
// and the other names keep the change. So when a step that writes will
// run at --approve medium (mediumUnattended), the home's regular files
// with more than one link are found on the host once per executor
// (bounded: hardLinkDepth deep, maxHardLinks), and a write to one is
// high: as the protected file it is another name of, or as a change undo
// cannot take back. The search is made only for a step that writes in the
// home (one round trip, once). On this machine the journal also sees any
// target's link count (shelljournal.go). Gap: on an SSH host, a name
// deeper than hardLinkDepth, or outside the home, or a host whose find has
// no -printf (BusyBox), is not seen.

const (
	hardLinkDepth = 4
	maxHardLinks  = 4096
)

// hardLinks returns the home's regular files with more than one link,
// each → the protected path it is another name of ("~/.bashrc"), or ""
// for one whose other names are not protected; looked up once per home.
func (e *Executor) hardLinks(ctx context.Context, v *hostView) (map[string]string, error) {
	if v.tr == nil || v.homeErr != nil || v.home == "" || v.home == "/" {
		return nil, nil
	}
	if m, ok := e.hlinks[v.home]; ok {
		return m, nil
	}
	var probes []string
	for _, q := range e.cfg.Policy.LinkProbes() {
		probes = append(probes, v.home+q[1:])
	}
	// One round trip: the protected places' linked files (P), then, only
	// when the home holds any linked file at all, the home's (H), each as
	// device:inode and path, NUL-ended.
	var b strings.Builder
	fmt.Fprintf(&b, "find %s -xdev -maxdepth %d -type f -links +1 -printf 'H %%D:%%i %%p\\0' 2>/dev/null", tools.Quote(v.home), hardLinkDepth)
	if len(probes) > 0 {
		b.WriteString("; find")
		for _, p := range probes {
			b.WriteString(" " + tools.Quote(p))
		}
		fmt.Fprintf(&b, " -maxdepth %d -type f -links +1 -printf 'P %%D:%%i %%p\\0' 2>/dev/null", linkSearchDepth)
	}
	b.WriteString("; :")
	res, err := v.tr.Run(ctx, transport.Command{Command: b.String(), CaptureLimit: 4 << 20})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("finding the home's hard-linked files: %w", err)
	}
	m := parseHardLinks(res.Stdout, v.home, probes)
	if e.hlinks == nil {
		e.hlinks = map[string]map[string]string{}
	}
	e.hlinks[v.home] = m
	return m, nil
}

// parseHardLinks reads the two finds' answer ("H DEV:INO PATH" and
// "P DEV:INO PATH", NUL-ended): the host's, so outside input. Only clean
// absolute paths under home (H) or one of probes (P) count, at most
// maxHardLinks. Each H path maps to the protected path (from "~") that
// shares its inode, or "".
func parseHardLinks(out, home string, probes []string) map[string]string {
	type ent struct{ id, p string }
	var hs, ps []ent
	for _, l := range strings.Split(out, "\x00") {
		kind, rest, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		id, p, ok := strings.Cut(rest, " ")
		if !ok || id == "" || !path.IsAbs(p) || path.Clean(p) != p {
			continue
		}
		switch {
		case kind == "H" && strings.HasPrefix(p, home+"/") && len(hs) < maxHardLinks:
			hs = append(hs, ent{id, p})
		case kind == "P" && len(ps) < maxHardLinks && slices.ContainsFunc(probes, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }):
			ps = append(ps, ent{id, p})
		}
	}
	m := map[string]string{}
	for _, h := range hs {
		m[h.p] = ""
		for _, q := range ps {
			if q.id == h.id && q.p != h.p {
				m[h.p] = homeShort(q.p, home)
				break
			}
		}
	}
	return m
}

// hardLinkFloor raises c to high when one of the files the step writes
// (reals: where they really are) has other hard links in the home.
func (e *Executor) hardLinkFloor(ctx context.Context, c classification, v *hostView, reals func() ([]string, error)) (classification, error) {
	rs, err := reals()
	if err != nil || v.home == "" || !slices.ContainsFunc(rs, func(r string) bool { return strings.HasPrefix(r, v.home+"/") }) {
		return c, err // the search covers the home: a step writing nowhere in it pays no round trip
	}
	links, err := e.hardLinks(ctx, v)
	if err != nil || len(links) == 0 {
		return c, err
	}
	for _, r := range rs {
		prot, ok := links[r]
		if !ok {
			continue
		}
		c.risk.Level = safety.High
		why := fmt.Sprintf("%s has other hard links: undo would put back a copy, and the other names keep the change", homeShort(r, v.home))
		if prot != "" {
			why = fmt.Sprintf("%s is another name (hard link) of the protected %s: rated as that protected path", homeShort(r, v.home), prot)
		}
		c.risk.Reasons = append(slices.Clip(c.risk.Reasons), why)
		return c, nil
	}
	return c, nil
}
