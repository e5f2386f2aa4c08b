package safety

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// place is where a static word naming a file may be when the step runs.
type place struct {
	p    string // cleaned path: absolute, or relative to the unknown start directory
	rel  bool   // p is relative to the directory the step starts in (home on SSH)
	lost bool   // the directory is unknown (another process's cwd): High to touch
	// unknown: where a symbolic link on the host leads could not be found
	// out (why): High to write, Medium to read.
	unknown string
	// raw is p as the kernel walks it, when a ".." in the word may climb
	// out of a symbolic link (p has it cleaned away lexically); else "".
	raw string
}

// maxTouched bounds the files AnalyzeCommand lists.
const maxTouched = 1024

// maxCwds bounds the working directories a command is followed into.
const maxCwds = 16

// places resolves a static word naming a file to every place it may be:
// each working directory an earlier cd, env -C, git -C … may have left
// (a cd in a pipeline or subshell does not last, so the earlier ones stay
// candidates), "/proc/self/root/X" as "/X", "/proc/self/cwd/X" as a
// relative "X", and through symbolic links the same command created.
func (c *classifier) places(a arg) []place { return c.placesVia(a, 0) }

// maxLinkHops bounds following links the command created (they may loop);
// maxLinkWork bounds the links followed in all.
const (
	maxLinkHops = 8
	maxLinkWork = 4096
)

func (c *classifier) placesVia(a arg, hops int) []place {
	v := a.val
	var out []place
	switch {
	case a.tilde && strings.HasPrefix(v, "~"):
		user, rest, _ := strings.Cut(v[1:], "/")
		home := homeStandIn
		switch {
		case user == "root":
			home = "/root"
		case user != "":
			home = "/home/" + user
		}
		out = []place{{p: path.Clean(home + "/" + rest), raw: home + "/" + rest}}
	case path.IsAbs(v):
		if pv, ok := procRaw(v); ok {
			// ".." after a /proc magic link (cwd, root, fd/N) climbs from
			// where the link leads, not lexically: /proc/self/cwd/../x
			// is x beside the working directory.
			out = []place{{p: pv, raw: v}}
			break
		}
		out = []place{{p: path.Clean(v), raw: v}}
	default:
		out = c.fromCwds(v)
	}
	var res []place
	for _, pl := range out {
		if !hasDotDot(v) || strings.HasPrefix(pl.p, "/proc/") {
			pl.raw = "" // the cleaned path is where the kernel goes
		}
		res = append(res, c.procPlaces(pl)...)
	}
	if hops >= maxLinkHops {
		return res
	}
	n := len(res)
	for _, pl := range res[:n] {
		if why, ok := c.host.unknownWhy(pl.p); ok {
			res = append(res, place{p: pl.p, rel: pl.rel, unknown: why})
			continue
		}
		targets := c.host.targets(pl.p)
		if t, ok := c.linkTarget(pl.p); ok {
			targets = append(targets, t)
		}
		for _, t := range targets {
			if c.linkHops++; c.linkHops > maxLinkWork {
				c.opaque("too many links created by the command to follow")
				return res
			}
			res = append(res, c.placesVia(arg{val: t, static: true, glob: a.glob}, hops+1)...)
		}
		if len(res) > 4*maxCwds {
			c.opaque("%s: too many places through links to follow", a.text)
			break
		}
	}
	return res
}

// fromCwds joins a relative path to every candidate working directory.
func (c *classifier) fromCwds(v string) []place {
	cwds := c.cwds
	if len(cwds) == 0 {
		cwds = []string{"."}
	}
	var out []place
	for _, d := range cwds {
		out = append(out, place{p: path.Join(d, v), rel: !path.IsAbs(d), raw: d + "/" + v})
	}
	return out
}

// procPlaces rewrites the /proc paths that lead back into the file tree:
// /proc/self/root/X (and /proc/PID/root/X) is /X; /proc/self/cwd/X is X
// from the working directory; /proc/PID/cwd/X is in a directory not known.
func (c *classifier) procPlaces(pl place) []place {
	if pl.rel || !strings.HasPrefix(pl.p, "/proc/") {
		return []place{pl}
	}
	parts := strings.SplitN(strings.TrimPrefix(pl.p, "/proc/"), "/", 3)
	if len(parts) < 2 {
		return []place{pl}
	}
	self := parts[0] == "self" || parts[0] == "thread-self"
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	if parts[1] == "task" && parts[0] != "thread-self" && (self || isDigits(parts[0]) || hasMeta(parts[0])) {
		// /proc/PID/task/TID/X is the process's X as one of its threads
		// sees it: its environ, mem, fd, root and cwd.
		if tid, x, ok := strings.Cut(rest, "/"); ok && (isDigits(tid) || hasMeta(tid)) {
			return c.procPlaces(place{p: "/proc/" + parts[0] + "/" + x, raw: pl.raw}) // x as written: procRaw kept its ".."
		}
	}
	if !self && !isDigits(parts[0]) {
		return []place{pl}
	}
	switch parts[1] {
	case "root":
		return c.procPlaces(place{p: path.Clean("/" + rest)})
	case "cwd":
		if self {
			if rest == "" {
				rest = "."
			}
			return c.fromCwds(rest)
		}
		return []place{{p: path.Join(homeStandIn, rest), lost: true}}
	}
	if hasDotDot(rest) {
		// ".." after a descriptor's directory (fd/N/..) or another
		// link: where it leads is known only when it runs (opaque).
		return []place{{p: pl.p, lost: true}}
	}
	return []place{pl}
}

// procRaw cleans an absolute path under /proc up to its first magic link
// (PID/cwd, PID/root, PID/fd/N, PID/task/TID/…) and keeps the rest as
// written, when that rest holds "..": the kernel follows the link first.
func procRaw(v string) (string, bool) {
	if !strings.HasPrefix(path.Clean(v), "/proc/") || !hasDotDot(v) {
		return "", false
	}
	comps := strings.Split(v, "/")
	var out []string
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		out = append(out, c)
		n := len(out)
		if n >= 3 && out[0] == "proc" && (out[n-1] == "cwd" || out[n-1] == "root" || n >= 4 && out[n-2] == "fd") {
			rest := strings.Join(comps[i+1:], "/")
			if !hasDotDot(rest) {
				return "", false
			}
			return "/" + strings.Join(out, "/") + "/" + rest, true
		}
	}
	return "", false
}

// linkTarget follows a symbolic or hard link the command created (ln),
// for p or a directory above it.
func (c *classifier) linkTarget(p string) (string, bool) {
	for link, target := range c.links {
		if p == link {
			return target, true
		}
		if rest, ok := strings.CutPrefix(p, link+"/"); ok {
			return path.Join(target, rest), true
		}
	}
	return "", false
}

// relArg reports whether a names a path from the working directory.
func relArg(a arg) bool { return !path.IsAbs(a.val) && !(a.tilde && strings.HasPrefix(a.val, "~")) }

// climbs reports whether a relative path leaves its starting directory.
func climbs(rel string) bool { return rel == ".." || strings.HasPrefix(rel, "../") }

// How write reports and remembers a write.
const (
	wQuiet    = 1 << iota // leave out the Medium reason: the command's rule says it
	wContent              // the write puts content in the file (not chmod, touch, rm)
	wTree                 // the write acts on the tree under the file (rm -r, chmod -R, cp -r)
	wRateOnly             // rate the path only: it is not a file the command touches (not journaled)
)

// dashIsStdout reports whether who (a program, with the option that
// names the file) takes the file name "-" as its standard output. For
// the others (cp, mv, ln, install, touch, dd, a redirection, and GNU tee
// and sort -o too) "-" is a file of that name in the working directory.
func dashIsStdout(who string) bool {
	name, _, _ := strings.Cut(who, " ")
	switch name {
	case "tar", "curl", "wget", "uniq", "xxd":
		return true
	}
	return false
}

// write classifies writing (creating, changing, deleting) the file a names.
func (c *classifier) write(who string, a arg, how int) {
	if !a.static {
		c.opaque("%s %s: target is not statically resolvable", who, a.text)
		return
	}
	if a.val == "-" && dashIsStdout(who) {
		return // standard output
	}
	found := c.findOperand(a, true)
	for _, pl := range c.places(a) {
		p, touch := pl.p, relTouch(pl)
		switch {
		case pl.lost:
			c.opaque("%s %s: path in another process's working directory", who, a.text)
			return
		case pl.unknown != "":
			c.add(High, "%s %s: %s", who, a.text, pl.unknown)
			continue
		case pl.rel && climbs(p):
			c.opaque("%s %s: path climbs above the working directory", who, a.text)
			return
		case (pl.rel || relArg(a)) && c.cwdLost: // after cd X, cd -: X is not where it runs
			c.opaque("%s %s: relative path after cd to an unresolved directory", who, a.text)
			return
		case pl.rel:
			// The working directory is unknown: assume the home directory, where
			// remote commands start, so ".ssh/authorized_keys" is caught.
			p = path.Join(homeStandIn, p)
		}
		if network(p) {
			c.add(High, "%s %s: connects to another host", who, a.text)
			c.network = append(c.network, p)
			return
		}
		if how&wContent != 0 && !a.glob {
			c.written[p] = true
		}
		if len(c.touched) < maxTouched && !found && how&wRateOnly == 0 {
			c.touched = append(c.touched, Touch{Path: touch, Raw: rawTouch(pl), Op: FileWrite, Tree: how&wTree != 0})
		}
		if how&wTree != 0 && c.p.holdsProtected(p, c.home, a.glob) {
			// cp -rT SRC ~, cp -r SRC/. ~/, chmod -R … ~: the whole tree,
			// protected files in it included.
			c.add(High, "%s %s: writes into a directory holding protected paths", who, a.text)
		}
		if c.opens != "" && how&wRateOnly == 0 && c.p.holdsProtected(p, c.home, a.glob) {
			// chmod g+w ~, chmod 777 ~/.config, chown bob ~: the files
			// in it keep their modes, but whoever may write the
			// directory may replace them.
			c.add(High, "%s: %s, and it holds protected paths: another user could replace them before undo restores it", a.text, c.opens)
		}
		l, why := c.p.writeRisk(p, c.home, a.glob)
		if l == High || l == Medium && how&wQuiet == 0 {
			c.add(l, "%s %s: %s", who, a.text, why)
		} else {
			c.a.add(l, "")
		}
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
		c.opaque("%s: script %s is not statically resolvable", who, a.text)
		return
	}
	for _, pl := range c.places(a) {
		p := pl.p
		c.program(programPath(pl))
		if pl.rel {
			p = path.Join(homeStandIn, p)
		}
		if c.written[p] {
			c.add(High, "%s: runs %s, which the same command wrote", who, a.text)
			return
		}
	}
	c.add(Medium, "%s: runs script or program file %s", who, a.text)
}

// readTree classifies reading a whole directory tree: High when it holds
// sensitive files.
func (c *classifier) readTree(who string, a arg) {
	if !a.static {
		return
	}
	for _, pl := range c.places(a) {
		p := pl.p
		if pl.unknown != "" {
			c.add(Medium, "%s %s: %s", who, a.text, pl.unknown)
			continue
		}
		if len(c.touched) < maxTouched && !pl.lost && !strings.Contains(a.val, "://") {
			c.touched = append(c.touched, Touch{Path: relTouch(pl), Raw: rawTouch(pl), Tree: true})
		}
		if pl.rel {
			p = path.Join(homeStandIn, p)
		}
		if c.p.holdsSensitive(p, c.home, a.glob) {
			c.add(High, "%s %s: reads a directory holding sensitive files", who, a.text)
			return
		}
	}
}

// read classifies reading the file a names: sensitive files are High.
func (c *classifier) read(who string, a arg) {
	if !a.static {
		c.opaque("%s %s: source is not statically resolvable", who, a.text)
		return
	}
	for _, pl := range c.places(a) {
		p := pl.p
		switch {
		case pl.lost:
			c.opaque("%s %s: path in another process's working directory", who, a.text)
			return
		case (pl.rel || relArg(a)) && c.cwdLost: // after cd X, cd -: X is not where it runs
			c.opaque("%s %s: relative path after cd to an unresolved directory", who, a.text)
			return
		case pl.unknown != "":
			c.add(Medium, "%s %s: %s", who, a.text, pl.unknown)
			continue
		}
		if network(p) {
			c.add(High, "%s %s: connects to another host", who, a.text)
			c.network = append(c.network, p)
			return
		}
		candidates := []string{p}
		if pl.rel {
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
		if len(c.touched) < maxTouched && !c.findOperand(a, false) && !strings.Contains(a.val, "://") {
			c.touched = append(c.touched, Touch{Path: relTouch(pl), Raw: rawTouch(pl)})
		}
		for _, cand := range candidates {
			if l, why := c.p.readRisk(cand, c.home, a.glob); l > Safe {
				c.add(l, "%s %s: %s", who, a.text, why)
				return
			}
		}
	}
}

// cd follows a literal change of directory for later relative paths. The
// directories before it stay candidates: a cd in a pipeline, a subshell
// or a branch not taken does not last.
func (c *classifier) cd(args []arg) {
	var ops []arg
	for _, a := range args {
		if a.static && strings.HasPrefix(a.val, "-") && a.val != "-" {
			continue
		}
		ops = append(ops, a)
	}
	c.lastCd = nil
	if len(ops) == 0 {
		c.addCwd(homeStandIn)
		c.lastCd = []string{homeStandIn}
		return
	}
	a := ops[0]
	if !a.static || a.glob || a.val == "-" {
		c.cwdLost = true
		return
	}
	if v := a.val; !a.tilde && !strings.HasPrefix(v, "~") && !path.IsAbs(v) && v != "." && v != ".." && !strings.HasPrefix(v, "./") && !strings.HasPrefix(v, "../") {
		// cd NAME looks NAME up in $CDPATH first (dash and bash alike).
		c.cdUnsure = cmp.Or(c.cdUnsure, "it runs after cd "+v+", which $CDPATH may send elsewhere")
	}
	var went []string
	for _, pl := range c.places(a) {
		switch {
		case pl.lost || pl.unknown != "" || pl.rel && climbs(pl.p):
			c.cwdLost = true
			return
		default:
			c.addCwd(pl.p)
			went = append(went, pl.p)
		}
	}
	c.lastCd = went
}

func (c *classifier) addCwd(d string) {
	if len(c.cwds) == 0 {
		c.cwds = []string{"."}
	}
	if slices.Contains(c.cwds, d) {
		return
	}
	if len(c.cwds) >= maxCwds {
		c.cwdLost = true
		return
	}
	c.cwds = append(c.cwds, d)
}

// link records a link the command creates (ln, cp -s/-l): the link's
// targets become writable through it, so creating a link to a protected
// path is High, and later reads and writes of the link are checked as the
// target's.
func (c *classifier) link(who string, targets []arg, link arg, intoDir bool, how linkHow) {
	for _, t := range targets {
		c.write(who+" (link target)", t, wQuiet)
		c.linkHolds(who, t)
		if !t.static || !link.static {
			continue
		}
		// The kernel reads a relative symbolic link from the link's
		// directory, not from where ln ran.
		for _, ft := range fromLinkDir(t, link, intoDir, how) {
			// Rated, not touched: ln writes nothing there, and the path
			// may not even exist (the link operand is a file).
			c.write(who+" (link target, from the link's directory)", ft, wQuiet|wRateOnly)
			c.linkHolds(who, ft)
			t = ft // the last: the link's parent directory
		}
		to := t.val
		if t.tilde {
			to = c.places(t)[0].p
		}
		for _, pl := range c.places(link) {
			p := pl.p
			if pl.rel {
				p = path.Join(homeStandIn, p)
			}
			// The link made in a directory takes the target's name (ln
			// -sf /tmp/.bashrc ~/ replaces ~/.bashrc): rated as the write
			// it is; without a slash the operand may be a directory too.
			in := path.Join(p, path.Base(to))
			if !pl.rel && !how.noTargetDir {
				c.write(who, arg{val: in, text: link.text + " (" + path.Base(to) + ")", static: true}, wQuiet|wRateOnly)
			}
			if intoDir {
				p = in
			}
			if len(c.links) < 64 {
				c.links[p] = to
				if pl.rel {
					c.links[pl.p] = to
				}
			}
		}
	}
}
