package executor

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Hard links the home's probe cannot see (issue 26). homeLinks' find
// goes hardLinkDepth deep, skips .git, node_modules and .cache, and looks
// in the home only: `echo KEY >> ~/work/a/b/c/d/e/f/keys`, another name
// of ~/.ssh/authorized_keys seven directories down, or one under
// ~/.cache, or /srv/app/rc outside the home on the same file system,
// were medium over SSH (this machine's journal sees any target's link
// count; an SSH host's SFTP stat does not say it). So the files a medium
// step writes that the probe could not have seen are asked about
// themselves, in one round trip for the step (`ls -nd`, POSIX: the link
// count is its second field), and one with other links is high as
// hardLinkFloor rates it. Where the transport's Stat says the count
// (this machine), Stat answers.

// maxUnseen bounds the written files asked about for one step; more is
// high (unseenLinksFloor).
const maxUnseen = 64

// probeSees reports whether homeLinks' find reaches a file at r.
func probeSees(r, home string) bool {
	rel, ok := strings.CutPrefix(r, home+"/")
	if !ok {
		return false
	}
	comps := strings.Split(rel, "/")
	if len(comps) > hardLinkDepth {
		return false
	}
	return !slices.ContainsFunc(comps[:len(comps)-1], func(c string) bool { return slices.Contains(hardLinkPrune, c) })
}

// unseenLinksFloor raises c to high when a file the step writes (rs:
// where they really are), out of the probe's reach, is a regular file
// with more than one link.
func (e *Executor) unseenLinksFloor(ctx context.Context, c classification, v *hostView, rs []string) (classification, error) {
	var unseen []string
	absent := func(r string) bool { // the journal looked: nothing there
		return slices.ContainsFunc(c.undo, func(s savedFile) bool { return s.Path == r && !s.existed && s.tree == nil })
	}
	for _, r := range rs {
		if path.IsAbs(r) && !probeSees(r, v.home) && !absent(r) && !slices.Contains(unseen, r) {
			unseen = append(unseen, r)
		}
	}
	if len(unseen) == 0 {
		return c, nil
	}
	if len(unseen) > maxUnseen {
		return highLinks(c, fmt.Sprintf("it writes more than %d files whose hard links cannot be looked up", maxUnseen)), nil
	}
	counts, err := linkCounts(ctx, v, unseen)
	if err != nil {
		return c, err
	}
	for _, r := range unseen {
		if n := counts[r]; n > 1 {
			return highLinks(c, fmt.Sprintf("%s has %d hard links: undo would put back a copy, and the other names (a protected file's, perhaps) keep the change",
				homeShort(r, v.home), n)), nil
		}
	}
	return c, nil
}

func highLinks(c classification, why string) classification {
	c.risk.Level = safety.High
	c.risk.Reasons = append(slices.Clip(c.risk.Reasons), why)
	return c
}

// linkCounts is the link count of each regular file among paths (others,
// and what does not exist, are absent): from what the view's look said
// (a become host's stat and this machine's say it), else this machine's
// Stat, else one `ls -nd` round trip for those the host did not say
// (SFTP's attributes have no link count).
func linkCounts(ctx context.Context, v *hostView, paths []string) (map[string]int, error) {
	m := map[string]int{}
	var ask []string
	for _, p := range paths {
		switch n, ok := v.linksOf(p); {
		case ok:
			if n > 0 {
				m[p] = n
			}
		case v.local:
			if fi, err := v.tr.Stat(ctx, p); err == nil && fi.Mode().IsRegular() {
				if n, ok := infoLinks(fi); ok {
					m[p] = int(n)
				}
			}
		default:
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 {
		return m, nil
	}
	paths, tr := ask, v.tr
	res, err := tr.Run(ctx, transport.Command{Command: linkCountScript(paths), CaptureLimit: 1 << 20})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("looking up hard links: %w", err)
	}
	for i, n := range parseLinkCounts(res.Stdout, len(paths)) {
		if n > 0 {
			m[paths[i]] = n
		}
	}
	return m, nil
}

// linkCountScript prints "K I MODE NLINK" for the I-th path ls can list
// (the first line of ls -nd's answer: a name's newline does not matter).
func linkCountScript(paths []string) string {
	var b strings.Builder
	b.WriteString("i=0; for f in")
	for _, p := range paths {
		b.WriteString(" " + tools.Quote(p))
	}
	b.WriteString(`; do ls -nd -- "$f" 2>/dev/null | { read -r m n r && printf 'K %s %s %s\n' "$i" "$m" "$n"; }; i=$((i+1)); done; :`)
	return b.String()
}

// parseLinkCounts reads linkCountScript's lines (the host's, so outside
// input): the link count of each of n paths that is a regular file, 0
// for the others and for what a line does not say well.
func parseLinkCounts(out string, n int) []int {
	counts := make([]int, n)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[0] != "K" || !strings.HasPrefix(f[2], "-") {
			continue
		}
		i, err1 := strconv.Atoi(f[1])
		c, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || i < 0 || i >= n || c < 0 || counts[i] != 0 {
			continue
		}
		counts[i] = c
	}
	return counts
}
