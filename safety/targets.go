package safety

import (
	"path"
	"strings"
)

// pathOf resolves a static word naming a file to an absolute path, using
// the directory of an earlier literal cd for relative paths. rel is true
// when the path stays relative to an unknown working directory.
func (c *classifier) pathOf(a arg) (p string, rel bool) {
	v := a.val
	if a.tilde && strings.HasPrefix(v, "~") {
		user, rest, _ := strings.Cut(v[1:], "/")
		home := homeStandIn
		switch {
		case user == "root":
			home = "/root"
		case user != "":
			home = "/home/" + user
		}
		return path.Clean(home + "/" + rest), false
	}
	if path.IsAbs(v) {
		return path.Clean(v), false
	}
	if c.cwd != "" {
		return path.Join(c.cwd, v), false
	}
	return path.Clean(v), true
}

// climbs reports whether a relative path leaves its starting directory.
func climbs(rel string) bool { return rel == ".." || strings.HasPrefix(rel, "../") }

// How write reports and remembers a write.
const (
	wQuiet   = 1 << iota // leave out the Medium reason: the command's rule says it
	wContent             // the write puts content in the file (not chmod, touch, rm)
)

// write classifies writing (creating, changing, deleting) the file a names.
func (c *classifier) write(who string, a arg, how int) {
	if !a.static {
		c.add(High, "%s %s: target is not statically resolvable", who, a.text)
		return
	}
	if a.val == "-" {
		return // standard output
	}
	p, rel := c.pathOf(a)
	switch {
	case rel && climbs(p):
		c.add(High, "%s %s: path climbs above the working directory", who, a.text)
		return
	case rel && c.cwdLost:
		c.add(High, "%s %s: relative path after cd to an unresolved directory", who, a.text)
		return
	case rel:
		// The working directory is unknown: assume the home directory, where
		// remote commands start, so ".ssh/authorized_keys" is caught.
		p = path.Join(homeStandIn, p)
	}
	if network(p) {
		c.add(High, "%s %s: connects to another host", who, a.text)
		return
	}
	if how&wContent != 0 && !a.glob {
		c.written[p] = true
	}
	l, why := c.p.writeRisk(p, "", a.glob)
	if l == High || l == Medium && how&wQuiet == 0 {
		c.add(l, "%s %s: %s", who, a.text, why)
	} else {
		c.a.add(l, "")
	}
}

// network reports bash's /dev/tcp and /dev/udp pseudo-files.
func network(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// runs classifies running a script or program file: Medium, High when the
// same code wrote it or its name is not static.
func (c *classifier) runs(who string, a arg) {
	if !a.static {
		c.add(High, "%s: script %s is not statically resolvable", who, a.text)
		return
	}
	p, rel := c.pathOf(a)
	if rel {
		p = path.Join(homeStandIn, p)
	}
	if c.written[p] {
		c.add(High, "%s: runs %s, which the same command wrote", who, a.text)
		return
	}
	c.add(Medium, "%s: runs script or program file %s", who, a.text)
}

// readTree classifies reading a whole directory tree: High when it holds
// sensitive files. Relative directories are not checked.
func (c *classifier) readTree(who string, a arg) {
	if !a.static {
		return
	}
	if p, rel := c.pathOf(a); !rel && c.p.holdsSensitive(p, a.glob) {
		c.add(High, "%s %s: reads a directory holding sensitive files", who, a.text)
	}
}

// read classifies reading the file a names: sensitive files are High.
func (c *classifier) read(who string, a arg) {
	if !a.static {
		c.add(High, "%s %s: source is not statically resolvable", who, a.text)
		return
	}
	p, rel := c.pathOf(a)
	if network(p) {
		c.add(High, "%s %s: connects to another host", who, a.text)
		return
	}
	candidates := []string{p}
	if rel {
		// The working directory is unknown: try the home directory, and
		// from anywhere "../../etc/shadow" may reach /etc/shadow.
		candidates = append(candidates, path.Join(homeStandIn, p))
		if climbs(p) {
			stripped := p
			for climbs(stripped) {
				stripped = strings.TrimPrefix(strings.TrimPrefix(stripped, ".."), "/")
			}
			candidates = append(candidates, "/"+stripped)
		}
	}
	for _, cand := range candidates {
		if l, why := c.p.readRisk(cand, "", a.glob); l > Safe {
			c.add(l, "%s %s: %s", who, a.text, why)
			return
		}
	}
}

// cd follows a literal change of directory for later relative paths.
func (c *classifier) cd(args []arg) {
	var ops []arg
	for _, a := range args {
		if a.static && strings.HasPrefix(a.val, "-") && a.val != "-" {
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) == 0 {
		c.cwd = homeStandIn
		return
	}
	a := ops[0]
	if !a.static || a.glob || a.val == "-" {
		c.cwdLost = true
		return
	}
	p, rel := c.pathOf(a)
	if rel {
		if climbs(p) {
			c.cwdLost = true
		}
		return
	}
	c.cwd = p
}
