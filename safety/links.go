package safety

import (
	"path"
	"slices"
	"strings"
)

// linkHow is how ln or cp makes a link: symbolic (-s), with -r the
// target is written relative to the link by ln itself, and with -T the
// link operand is never a directory to put the link in.
type linkHow struct{ symbolic, relative, noTargetDir bool }

// fromLinkDir is the target of a symbolic link as the kernel reads it: a
// relative target (not made relative by ln -r) is taken from the link's
// directory ("ln -s agent/config.yaml ~/.config/k" links to
// ~/.config/agent/config.yaml). The link's directory is its parent, or
// the link operand itself when that is a directory (intoDir, or one that
// may exist: both are given). None when the target is not relative or
// the link is where the command runs.
func fromLinkDir(t, link arg, intoDir bool, how linkHow) []arg {
	if !how.symbolic || how.relative || t.tilde || path.IsAbs(t.val) || t.val == "" {
		return nil
	}
	dirs := []string{strings.TrimRight(link.val, "/")}
	switch {
	case how.noTargetDir:
		dirs = []string{path.Dir(dirs[0])}
	case !intoDir:
		dirs = append(dirs, path.Dir(dirs[0]))
	}
	var out []arg
	for _, dir := range dirs {
		if dir == "." || dir == "" {
			continue
		}
		out = append(out, arg{val: dir + "/" + t.val, text: t.text, src: t.src, static: true, glob: t.glob || link.glob, tilde: link.tilde})
	}
	return out
}

// linkHolds rates a link to a directory that holds protected or secret
// places (the home directory, ~/.config, /home) as High: through the link
// they are as reachable as through the directory.
func (c *classifier) linkHolds(who string, t arg) {
	if !t.static {
		return
	}
	for _, pl := range c.places(t) {
		p := pl.p
		if pl.rel {
			p = path.Join(homeStandIn, p)
		}
		if c.p.holdsProtected(p, c.home, t.glob) || c.p.holdsSensitive(p, c.home, t.glob) {
			c.add(High, "%s (link target) %s: a directory holding protected paths", who, t.text)
			return
		}
	}
}

// holdsProtected reports whether the tree at abs holds a protected or
// system path: abs is the home directory or above it, or above a place
// ProtectedPaths or agent's own directories name.
func (p *Policy) holdsProtected(abs, home string, glob bool) bool {
	return strings.HasPrefix(homeStandIn+"/", abs+"/") ||
		holdsAny(abs, home, glob, slices.Concat(p.ProtectedPaths, p.AutorunPaths, ownDirs()))
}
