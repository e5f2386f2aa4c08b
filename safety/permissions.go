package safety

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Permissions are the limits a plan declares (`permissions:`) or the
// operator gives (--allow-write): the files a run's steps may read and
// write, the programs they may run, and whether they may connect to other
// hosts. They are a contract checked on each resolved step (Check), on top
// of the risk levels: a step outside them is denied whatever the approval.
// The kernel confinement is the hard boundary; this is the declared one.
type Permissions struct {
	Read, Write, Run Globs
	// Network limits connections when Limited: allowed only if Allowed.
	Network NetworkRule
	// Source says where the permissions were declared ("fix.yaml:3",
	// "--allow-write"), for messages.
	Source string
}

// Globs is one list of permissions. When Limited is false the list does
// not limit anything (a plan's block limits all four; --allow-write only
// writes).
type Globs struct {
	Limited bool
	List    []string
}

// NetworkRule is `network: yes|no`.
type NetworkRule struct {
	Limited, Allowed bool
}

// ParsePathGlob checks a `read:` or `write:` pattern and returns it
// cleaned: absolute or starting with "~" (the target user's home), no ".."
// element, `**` only as a whole element (any number of directories,
// none included), other elements path.Match patterns.
func ParsePathGlob(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(s, 0) || strings.ContainsRune(s, '\n') {
		return "", fmt.Errorf("%q: a path cannot hold a NUL or newline", s)
	}
	if s != "~" && !strings.HasPrefix(s, "~/") && !path.IsAbs(s) {
		return "", fmt.Errorf("%q: a path must be absolute or start with ~/ (relative paths depend on where a step runs)", s)
	}
	for _, el := range strings.Split(s, "/") {
		if el == ".." {
			return "", fmt.Errorf("%q: `..` is not allowed in a permission (write the path it leads to)", s)
		}
		if strings.Contains(el, "**") && el != "**" {
			return "", fmt.Errorf("%q: `**` must be a whole path element (dir/**, not dir/**.log)", s)
		}
		if _, err := path.Match(el, ""); err != nil {
			return "", fmt.Errorf("%q: bad pattern %q: %v", s, el, err)
		}
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		return "~" + strings.TrimSuffix(path.Clean("/"+s[1:]), "/"), nil
	}
	return path.Clean(s), nil
}

// ParseWritePath checks a write limit (--allow-write, the config's
// limits.allow_write and safety.sandbox.allow_write: one list) and returns
// it as a permission glob: a plain path stands for itself and everything
// under it.
func ParseWritePath(s string) (string, error) {
	g, err := ParsePathGlob(s)
	if err != nil {
		return "", err
	}
	if !strings.ContainsAny(g, "*?[\\") {
		g = strings.TrimSuffix(g, "/") + "/**"
	}
	return g, nil
}

// SandboxPath is what the sandbox opens to writes for a write limit g (as
// ParseWritePath returns it): the directory of "DIR/**", or a pattern in
// a path's last element (the files it matches when the host's rules are
// computed). Landlock grants whole hierarchies, so a pattern elsewhere
// ("~/*/logs/**") is an error rather than a wider grant.
func SandboxPath(g string) (string, error) {
	if d, ok := strings.CutSuffix(g, "/**"); ok && !strings.ContainsAny(d, "*?[\\") {
		if d == "" {
			d = "/"
		}
		return d, nil
	}
	if !strings.ContainsAny(path.Dir(g), "*?[\\") && !strings.Contains(path.Base(g), "**") {
		return g, nil
	}
	return "", fmt.Errorf("%q: the sandbox opens a directory (and what is under it) or a pattern in a path's last element; give the directory", g)
}

// ParseProgramGlob checks a `run:` entry: a command name pattern (rm,
// systemctl, python3*), matched against commands found by name, or a path
// pattern like ParsePathGlob's, matched against program files run by path.
func ParseProgramGlob(s string) (string, error) {
	if strings.Contains(s, "/") || strings.HasPrefix(s, "~") {
		return ParsePathGlob(s)
	}
	if s == "" {
		return "", errors.New("empty program name")
	}
	if strings.ContainsAny(s, " \t\n\x00") {
		return "", fmt.Errorf("%q: a program name has no spaces (list arguments nowhere: run: names programs)", s)
	}
	if _, err := path.Match(s, ""); err != nil {
		return "", fmt.Errorf("%q: bad pattern: %v", s, err)
	}
	return s, nil
}

// Needs is what one resolved step needs of the permissions.
type Needs struct {
	// Reads and Writes are the files it reads and writes: absolute,
	// "~/…" when the home directory is not known yet, or a glob pattern
	// (Touch.Pattern) for the files it matches. Tree: the step acts on
	// everything under Path.
	Reads, Writes []Touch
	// Programs are command names and absolute program paths ("~/…" when
	// the home is not known yet).
	Programs []string
	// Network says why the step connects out ("curl"); nil if it does not.
	Network []string
	// Unknown says why what the step touches cannot be known.
	Unknown []string
}

// Check returns why the step that needs n is outside p: one reason per
// permission lacked, nil when p allows it. home expands "~" in p and n;
// when home is "" (checking a plan before any host is known), a "~"
// pattern matches only "~/…" needs, and a need Check cannot decide
// without the home (an absolute path where a "~" pattern might cover it)
// is left to the check when the step runs.
func (p *Permissions) Check(n Needs, home string) []string {
	if p == nil {
		return nil
	}
	var out []string
	if len(n.Unknown) > 0 {
		var short []string
		if p.Read.Limited && !p.covers(p.Read.List, Touch{Path: "/", Tree: true}, home) {
			short = append(short, "`read:`")
		}
		if p.Write.Limited && !p.covers(p.Write.List, Touch{Path: "/", Tree: true}, home) {
			short = append(short, "`write:`")
		}
		if p.Run.Limited && !(slices.Contains(p.Run.List, "*") && p.covers(p.Run.List, Touch{Path: "/", Tree: true}, home)) {
			short = append(short, "`run:`")
		}
		if p.Network.Limited && !p.Network.Allowed {
			short = append(short, "`network:`")
		}
		if len(short) > 0 {
			out = append(out, fmt.Sprintf("what it reads, writes or runs cannot be known before it runs (%s), and %s %s not allow everything",
				n.Unknown[0], strings.Join(short, ", "), map[bool]string{true: "does", false: "do"}[len(short) == 1]))
		}
	}
	if p.Read.Limited {
		for _, r := range n.Reads {
			if !p.covers(p.Read.List, r, home) {
				out = append(out, fmt.Sprintf("reads %s, which `read:` does not allow", r.describe()))
			}
		}
	}
	if p.Write.Limited {
		for _, w := range n.Writes {
			if !p.covers(p.Write.List, w, home) {
				out = append(out, fmt.Sprintf("writes %s, which `write:` does not allow", w.describe()))
			}
		}
	}
	if p.Run.Limited {
		for _, prog := range n.Programs {
			if !p.runs(prog, home) {
				out = append(out, fmt.Sprintf("runs %s, which `run:` does not list", prog))
			}
		}
	}
	if p.Network.Limited && !p.Network.Allowed && len(n.Network) > 0 {
		out = append(out, fmt.Sprintf("connects to other hosts (%s), and `network:` is no", strings.Join(n.Network, ", ")))
	}
	return out
}

func (n Touch) describe() string {
	switch {
	case n.Pattern:
		return "the files matching " + n.Path
	case n.Tree:
		return "everything under " + n.Path
	}
	return n.Path
}

// covers reports whether one of the patterns allows n. A pattern need is
// allowed by the same pattern, or as the tree under its directory part.
func (p *Permissions) covers(list []string, n Touch, home string) bool {
	if n.Pattern {
		if slices.Contains(list, n.Path) {
			return true
		}
		n = Touch{Path: patternDir(n.Path), Tree: true}
	}
	for _, g := range list {
		if g == "" || !(g[0] == '/' || g[0] == '~') {
			continue // a command name (run:)
		}
		pat, np, ok := expandBoth(g, n.Path, home)
		if ok && matchPath(split(pat), split(np), n.Tree) {
			return true
		}
	}
	if home != "" {
		return false
	}
	// Before the home is known, "~/x" and an absolute pattern (or an
	// absolute path and a "~" pattern) cannot be compared, nor can a path
	// relative to where the step runs: the check when it runs decides.
	// A home directory is never under the system roots of neverHome.
	switch {
	case n.Path == "" || n.Path[0] != '/' && n.Path[0] != '~':
		return true
	case n.Path[0] == '/':
		return !neverHome(n.Path) && slices.ContainsFunc(list, func(g string) bool { return strings.HasPrefix(g, "~") })
	}
	return slices.ContainsFunc(list, func(g string) bool { return strings.HasPrefix(g, "/") && !neverHome(patternDir(g)) })
}

// runs reports whether prog (a command name or a program path) is listed.
func (p *Permissions) runs(prog, home string) bool {
	if !strings.Contains(prog, "/") && !strings.HasPrefix(prog, "~") {
		for _, g := range p.Run.List {
			if ok, _ := path.Match(g, prog); ok && !strings.Contains(g, "/") && !strings.HasPrefix(g, "~") {
				return true
			}
		}
		return false
	}
	if !strings.HasPrefix(prog, "/") && !strings.HasPrefix(prog, "~") {
		return home == "" // relative to where the step runs: decided then
	}
	return p.covers(p.Run.List, Touch{Path: prog}, home)
}

// expandBoth writes pattern g and path np alike: "~" expanded by home, or
// both left with "~" when home is "". ok is false when they cannot be
// compared.
func expandBoth(g, np, home string) (string, string, bool) {
	if home != "" {
		return expandHome(g, home), expandHome(np, home), true
	}
	return g, np, true
}

func expandHome(p, home string) string {
	if p == "~" {
		return path.Clean(home)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return path.Join(home, rest)
	}
	return p
}

// patternDir is the directory part of a glob pattern before its first
// element with a pattern character.
func patternDir(p string) string {
	els := strings.Split(p, "/")
	for i, el := range els {
		if strings.ContainsAny(el, "*?[\\") {
			d := strings.Join(els[:i], "/")
			if d == "" {
				return "/"
			}
			return d
		}
	}
	return p
}

func split(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// maxMatchWork bounds matchPath on hostile patterns (a**/**/**/…).
const maxMatchWork = 100_000

// matchPath matches path elements against pattern elements: `**` is any
// number of elements (none included), others path.Match. With tree, every
// path under segs must match too: the pattern must end in `**` there.
func matchPath(pat, segs []string, tree bool) bool {
	work := 0
	var m func(pi, si int) bool
	m = func(pi, si int) bool {
		if work++; work > maxMatchWork {
			return false
		}
		if si == len(segs) {
			rest := pat[pi:]
			if len(rest) == 0 {
				return !tree
			}
			for _, el := range rest {
				if el != "**" {
					return false
				}
			}
			return true
		}
		if pi == len(pat) {
			return false
		}
		if pat[pi] == "**" {
			return m(pi+1, si) || m(pi, si+1)
		}
		if ok, _ := path.Match(pat[pi], segs[si]); !ok {
			return false
		}
		return m(pi+1, si+1)
	}
	return m(0, 0)
}

// NeedsOf turns a command's Analysis into Needs, its paths made absolute
// by abs (relative paths are from where the step starts; abs may leave
// "~/…" as is when the home is not known).
func NeedsOf(an Analysis, abs func(string) string) Needs {
	var n Needs
	for _, t := range an.Touches {
		if notAFile(t.Path) {
			continue
		}
		need := Touch{Path: abs(t.Path), Op: t.Op, Tree: t.Tree, Pattern: strings.ContainsAny(t.Path, "*?[")}
		if t.Writes() {
			n.Writes = append(n.Writes, need)
		} else {
			n.Reads = append(n.Reads, need)
		}
	}
	for _, prog := range an.Programs {
		if strings.Contains(prog, "/") {
			prog = abs(prog)
		}
		n.Programs = append(n.Programs, prog)
	}
	n.Network, n.Unknown = an.Network, an.Unknown
	return n
}

// notAFile reports the pseudo-files a redirection may name that are no
// file (reading or writing them touches nothing a permission names).
func notAFile(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/urandom", "/dev/random":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/")
}

// neverHomeRoots hold no user's home directory.
var neverHomeRoots = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc",
	"/sys", "/dev", "/run", "/tmp", "/var/log", "/var/tmp", "/var/cache", "/var/spool"}

// neverHome reports whether p is in a directory that is no home (so "~"
// cannot name it, whatever the target's home is).
func neverHome(p string) bool {
	for _, r := range neverHomeRoots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// Within writes the paths of n under home as "~/…", so that they name the
// same files on a host where the user's home is elsewhere.
func (n Needs) Within(home string) Needs {
	if home == "" || home == "/" {
		return n
	}
	home = path.Clean(home)
	tilde := func(p string) string {
		if p == home {
			return "~"
		}
		if rest, ok := strings.CutPrefix(p, home+"/"); ok {
			return "~/" + rest
		}
		return p
	}
	out := Needs{Network: n.Network, Unknown: n.Unknown}
	for _, r := range n.Reads {
		r.Path = tilde(r.Path)
		out.Reads = append(out.Reads, r)
	}
	for _, w := range n.Writes {
		w.Path = tilde(w.Path)
		out.Writes = append(out.Writes, w)
	}
	for _, p := range n.Programs {
		out.Programs = append(out.Programs, tilde(p))
	}
	return out
}

// MergeNeeds joins what several steps (or sides of a step) need.
func MergeNeeds(all ...Needs) Needs {
	var out Needs
	for _, n := range all {
		out.Reads = append(out.Reads, n.Reads...)
		out.Writes = append(out.Writes, n.Writes...)
		out.Programs = append(out.Programs, n.Programs...)
		out.Network = append(out.Network, n.Network...)
		out.Unknown = append(out.Unknown, n.Unknown...)
	}
	return out
}

// Needed returns the tightest permissions that allow n: the exact paths
// read and written (a tree as "dir/**", a pattern as written), the
// programs run, network when a step connects. ok is false when n holds
// something whose effects cannot be known (n.Unknown) or a path that is
// not absolute nor "~/…": no list of paths would be true then.
func Needed(n Needs) (p *Permissions, why string) {
	if len(n.Unknown) > 0 {
		return nil, n.Unknown[0]
	}
	p = &Permissions{Read: Globs{Limited: true}, Write: Globs{Limited: true}, Run: Globs{Limited: true},
		Network: NetworkRule{Limited: true, Allowed: len(n.Network) > 0}}
	add := func(g *Globs, need Touch) string {
		pat := need.Path
		if !need.Pattern {
			pat = escapeGlob(pat)
			if need.Tree {
				pat = strings.TrimSuffix(pat, "/") + "/**"
			}
		}
		clean, err := ParsePathGlob(pat)
		if err != nil {
			return fmt.Sprintf("%s cannot be written as a permission: %v", need.Path, err)
		}
		if !slices.Contains(g.List, clean) {
			g.List = append(g.List, clean)
		}
		return ""
	}
	for _, r := range n.Reads {
		if why := add(&p.Read, r); why != "" {
			return nil, why
		}
	}
	for _, w := range n.Writes {
		if why := add(&p.Write, w); why != "" {
			return nil, why
		}
	}
	for _, prog := range n.Programs {
		clean, err := ParseProgramGlob(escapeGlob(prog))
		if err != nil {
			return nil, fmt.Sprintf("program %s cannot be written as a permission: %v", prog, err)
		}
		if !slices.Contains(p.Run.List, clean) {
			p.Run.List = append(p.Run.List, clean)
		}
	}
	slices.Sort(p.Read.List)
	slices.Sort(p.Write.List)
	slices.Sort(p.Run.List)
	return p, ""
}

// escapeGlob writes a literal path as a pattern that matches only it.
func escapeGlob(p string) string {
	if !strings.ContainsAny(p, "*?[\\") {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune("*?[\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
