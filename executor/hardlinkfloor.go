package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
// (bounded: hardLinkDepth deep, package and git trees pruned,
// maxHardLinks), and a write to one is high: as the protected file it is
// another name of, or as a change undo cannot take back. The same round
// trip finds the symbolic links in the protected places (linkfloor.go):
// one probe, one cache (homeLinks). A find without -printf (BusyBox)
// gives each linked file's device and inode through stat instead. On this
// machine the journal also sees any target's link count
// (shelljournal.go); what the probe cannot reach (deeper than
// hardLinkDepth, under a pruned directory, outside the home) is asked
// about itself (unseenlinks.go).

const (
	hardLinkDepth = 6
	maxHardLinks  = 4096
)

// hardLinkPrune are the directories the hard-link search does not enter:
// git's object stores (a local clone hard-links them by the thousand)
// and package trees.
var hardLinkPrune = []string{".git", "node_modules", ".cache"}

// foundLinks is what homeLinks found in one home: hard maps each
// regular file with other links to the protected path it is another
// name of ("~/.bashrc") or ""; sym maps where each symbolic link in a
// protected place leads (its real path) to the link, from "~".
type foundLinks struct {
	hard, sym map[string]string
}

// homeLinks looks the home's links up once per home, in one round trip:
// the home's hard-linked files (H), the protected places' hard-linked
// files (P), each as device:inode and path, and the protected places'
// symbolic links with where they lead (L), NUL-ended.
func (e *Executor) homeLinks(ctx context.Context, v *hostView) (foundLinks, error) {
	if v.tr == nil || v.homeErr != nil || v.home == "" || v.home == "/" {
		return foundLinks{}, nil
	}
	if m, ok := e.links[v.home]; ok {
		return m, nil
	}
	var probes []string
	for _, q := range e.cfg.Policy.LinkProbes() {
		probes = append(probes, v.home+q[1:])
	}
	marker := linkMarker()
	res, err := v.tr.Run(ctx, transport.Command{Command: linkProbeScript(v.home, probes, marker), CaptureLimit: 4 << 20})
	if cerr := ctx.Err(); cerr != nil {
		return foundLinks{}, cerr
	}
	if err != nil {
		return foundLinks{}, fmt.Errorf("finding the home's links: %w", err)
	}
	m := foundLinks{hard: parseHardLinks(res.Stdout, v.home, probes), sym: map[string]string{}}
	for real, link := range parseSymLinks(res.Stdout, probes, marker) {
		if real != link {
			m.sym[real] = homeShort(link, v.home)
		}
	}
	if e.links == nil {
		e.links = map[string]foundLinks{}
	}
	e.links[v.home] = m
	return m, nil
}

// linkMarker is a name no path on the host is expected to resolve to
// (random per probe), that marks each link's record in the probe's
// output where one readlink resolves them all (linkProbeScript).
func linkMarker() string {
	var b [12]byte
	rand.Read(b[:])
	return "/.agent-link-" + hex.EncodeToString(b[:])
}

// linkProbeScript is homeLinks' command: POSIX sh, GNU find's -printf
// where the host's find has it, stat(1) for each linked file where not.
// Where each symbolic link leads: with GNU find and readlink, one
// readlink -m for all of them (through xargs), each link named by a
// record "MARKER/path/of/link" that readlink -m gives back as it is (no
// component of MARKER exists) before the link's real path; elsewhere
// (BusyBox) a readlink -f per link. A readlink per link took ~3 s on a
// home with pyenv's and cargo's ~110 links under the probed places.
func linkProbeScript(home string, probes []string, marker string) string {
	var ps strings.Builder
	for _, p := range probes {
		ps.WriteString(" " + tools.Quote(p))
	}
	var prune strings.Builder
	prune.WriteString("\\(")
	for i, n := range hardLinkPrune {
		if i > 0 {
			prune.WriteString(" -o")
		}
		prune.WriteString(" -name " + tools.Quote(n))
	}
	prune.WriteString(" \\) -prune -o")
	var b strings.Builder
	// ids KIND: device:inode and path of each file named, NUL-ended.
	b.WriteString(`ids='for f; do i=$(stat -c %d:%i -- "$f" 2>/dev/null) && printf "%s %s %s\0" "$0" "$i" "$f"; done'; `)
	b.WriteString(`g=; if find / -maxdepth 0 -printf "" >/dev/null 2>&1; then g=1; `)
	fmt.Fprintf(&b, `find %s -xdev -maxdepth %d %s -type f -links +1 -printf 'H %%D:%%i %%p\0' 2>/dev/null; `, tools.Quote(home), hardLinkDepth, prune.String())
	if len(probes) > 0 {
		fmt.Fprintf(&b, `find%s -maxdepth %d -type f -links +1 -printf 'P %%D:%%i %%p\0' 2>/dev/null; `, ps.String(), linkSearchDepth)
	}
	b.WriteString(`else `)
	fmt.Fprintf(&b, `find %s -xdev -maxdepth %d %s -type f -links +1 -exec sh -c "$ids" H {} + 2>/dev/null; `, tools.Quote(home), hardLinkDepth, prune.String())
	if len(probes) > 0 {
		fmt.Fprintf(&b, `find%s -maxdepth %d -type f -links +1 -exec sh -c "$ids" P {} + 2>/dev/null; `, ps.String(), linkSearchDepth)
	}
	b.WriteString(`fi; `)
	if len(probes) > 0 {
		b.WriteString(`if [ -n "$g" ] && readlink -mz / >/dev/null 2>&1; then `)
		fmt.Fprintf(&b, `find%s -maxdepth %d -type l -printf '%s%%p\0%%p\0' 2>/dev/null | xargs -0 -r readlink -mz -- 2>/dev/null; `,
			ps.String(), linkSearchDepth, marker)
		// Where each link leads; $(…; echo .) keeps a name's final newline.
		fmt.Fprintf(&b, `else find%s -maxdepth %d -type l -exec sh -c 'for l; do r=$(readlink -f -- "$l" && echo .) && printf "L %%s\0%%s\0" "$l" "${r%%?.}"; done' sh {} + 2>/dev/null; fi; `,
			ps.String(), linkSearchDepth)
	}
	b.WriteString(":")
	return b.String()
}

// parseHardLinks reads the probe's H and P records ("H DEV:INO PATH",
// NUL-ended): the host's, so outside input. Only clean absolute paths
// under home (H) or one of probes (P) count, at most maxHardLinks. Each H
// path maps to the protected path (from "~") that shares its inode, or "".
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
		case kind == "P" && len(ps) < maxHardLinks && underAny(p, probes):
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

// parseSymLinks reads the probe's L records ("L LINK\0REAL\0", or
// "MARKERLINK\0REAL\0" where REAL is missing when readlink failed): only
// clean absolute links at or under one of probes, with a clean absolute
// real path, at most maxProtectedLinks; real → link.
func parseSymLinks(out string, probes []string, marker string) map[string]string {
	m := map[string]string{}
	recs := strings.Split(out, "\x00")
	isMarked := func(r string) bool { return marker != "" && strings.HasPrefix(r, marker+"/") }
	for i := 0; i+1 < len(recs) && len(m) < maxProtectedLinks; i++ {
		link, ok := strings.CutPrefix(recs[i], "L ")
		if !ok && isMarked(recs[i]) {
			link, ok = recs[i][len(marker):], !isMarked(recs[i+1])
		}
		if !ok {
			continue
		}
		real := recs[i+1]
		i++
		if !path.IsAbs(link) || path.Clean(link) != link || !underAny(link, probes) || !path.IsAbs(real) || path.Clean(real) != real {
			continue
		}
		if _, dup := m[real]; !dup {
			m[real] = link
		}
	}
	return m
}

// underAny reports whether p is one of dirs or lies under one.
func underAny(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
}

// hardLinkFloor raises c to high when one of the files the step writes
// (rs: where they really are) has other hard links in the home.
func hardLinkFloor(c classification, links foundLinks, home string, rs []string) classification {
	for _, r := range rs {
		prot, ok := links.hard[r]
		if !ok {
			continue
		}
		c.risk.Level = safety.High
		why := fmt.Sprintf("%s has other hard links: undo would put back a copy, and the other names keep the change", homeShort(r, home))
		if prot != "" {
			why = fmt.Sprintf("%s is another name (hard link) of the protected %s: rated as that protected path", homeShort(r, home), prot)
		}
		c.risk.Reasons = append(slices.Clip(c.risk.Reasons), why)
		return c
	}
	return c
}
