package safety

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// homeStandIn is where "~" points when a command is classified without
// knowing the home directory: a user's home, not a system path.
const homeStandIn = "/home/~"

// pathForms returns p and, when p lies in a home directory (home, /home/X
// or /root), the same path written from "~", so "~/" patterns apply.
func pathForms(p, home string) []string {
	forms := []string{p}
	add := func(prefix string) bool {
		if prefix != "" && prefix != "/" && strings.HasPrefix(p+"/", prefix+"/") {
			forms = append(forms, "~"+strings.TrimPrefix(p, prefix))
			return true
		}
		return false
	}
	if add(home) || add("/root") {
		return forms
	}
	if rest, ok := strings.CutPrefix(p, "/home/"); ok {
		user, _, _ := strings.Cut(rest, "/")
		add("/home/" + user)
		return forms
	}
	if f, ok := accountForm(p, accountHomes()); ok {
		forms = append(forms, f)
	}
	return forms
}

// pathKind tells absolute, home-relative and relative paths apart.
func pathKind(p string) byte {
	if p != "" && (p[0] == '/' || p[0] == '~') {
		return p[0]
	}
	return '.'
}

func components(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// matchPattern reports whether a path can be matched by a policy pattern.
// The pattern covers everything below what it names. When glob is true the
// path is itself a shell pattern and any overlap counts.
func matchPattern(pattern, p string, glob bool) bool {
	if !strings.Contains(pattern, "/") {
		return overlap(pattern, path.Base(p), glob)
	}
	if pathKind(pattern) != pathKind(p) {
		return false
	}
	pc, gc := components(pattern), components(p)
	if len(gc) < len(pc) {
		return false
	}
	for i := range pc {
		if !overlap(pc[i], gc[i], glob) {
			return false
		}
	}
	return true
}

// overlap reports whether a pattern component and a path component (itself
// a pattern when glob) can name the same file.
func overlap(pattern, name string, glob bool) bool {
	if !glob || !hasMeta(name) {
		ok, err := path.Match(pattern, name)
		return ok || err != nil && pattern == name
	}
	if !hasMeta(pattern) {
		ok, err := path.Match(name, pattern)
		return ok || err != nil
	}
	pp, np := literalPrefix(pattern), literalPrefix(name)
	ps, ns := literalSuffix(pattern), literalSuffix(name)
	return (strings.HasPrefix(pp, np) || strings.HasPrefix(np, pp)) &&
		(strings.HasSuffix(ps, ns) || strings.HasSuffix(ns, ps))
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

func literalPrefix(s string) string {
	if i := strings.IndexAny(s, "*?["); i >= 0 {
		return s[:i]
	}
	return s
}

func literalSuffix(s string) string {
	if i := strings.LastIndexAny(s, "*?]"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// underSystem reports whether writing p can change something in a system
// root: p is a root, lies below one, or is one of its ancestors ("/").
func (p *Policy) underSystem(abs string, glob bool) bool {
	gc := components(abs)
	for _, root := range p.SystemRoots {
		rc := components(root)
		n := min(len(rc), len(gc))
		all := true
		for i := 0; i < n && all; i++ {
			all = overlap(rc[i], gc[i], glob)
		}
		if all {
			return true
		}
	}
	return false
}

func (p *Policy) matchAny(patterns []string, abs, home string, glob bool) bool {
	for _, form := range pathForms(abs, home) {
		for _, pat := range patterns {
			if matchPattern(pat, form, glob) {
				return true
			}
		}
	}
	return false
}

func (p *Policy) harmless(abs string, glob bool) bool {
	if glob {
		return false
	}
	for _, pat := range p.HarmlessDevices {
		if ok, _ := path.Match(pat, abs); ok {
			return true
		}
	}
	return false
}

// writeRisk says what writing abs means: High with a reason for system
// and protected paths, Medium otherwise, Safe for harmless devices.
func (p *Policy) writeRisk(abs, home string, glob bool) (Level, string) {
	switch {
	case p.harmless(abs, glob):
		return Safe, ""
	case p.underSystem(abs, glob):
		return High, "write to system path"
	case gitRuns(abs):
		return High, "write to a git or Mercurial hook or configuration (git and hg run what it names)"
	case p.matchAny(ownDirs(), abs, home, glob):
		return High, "write to agent's own configuration or state (its policy, audit log, undo journal)"
	case p.matchAny(p.ProtectedPaths, abs, home, glob):
		return High, "write to protected path"
	case p.matchAny(p.AutorunPaths, abs, home, glob):
		return High, "write to a place whose contents run later (autorun: site-packages, editor plugins, crontab, systemd units, …)"
	case otherAccountDot(abs, home):
		return High, "write to another account's dot-file (its shell and tools read it; the kernel denies it too)"
	}
	return Medium, "writes a file"
}

// readRisk says what reading abs means: High for sensitive files.
func (p *Policy) readRisk(abs, home string, glob bool) (Level, string) {
	if !glob && p.matchAny(p.PublicPaths, abs, home, false) {
		return Safe, ""
	}
	if p.matchAny(p.SensitivePaths, abs, home, glob) || p.matchAny(procSecrets, abs, home, glob) {
		return High, "reads sensitive file"
	}
	if p.matchAny(ownDirs(), abs, home, glob) {
		return High, "reads agent's own configuration or state"
	}
	if why := p.foundSecret(abs, home, glob); why != "" {
		return High, why
	}
	return Safe, ""
}

// foundSecret says why reading abs reaches a secret the kernel hides
// from unapproved steps when it can (confine/secrets.go), or "": in the
// home or a relative path (the working directory), an entry named like
// SecretNames; in the home, a dot-entry not in ReadableDotfiles. The
// classifier holds the same line so a host without Landlock is covered
// too (issue 26). Outside the home and the working directory the names
// mean nothing (/etc/ssl/certs/*.pem are public).
func (p *Policy) foundSecret(abs, home string, glob bool) string {
	for _, form := range pathForms(abs, home) {
		kind := pathKind(form)
		if kind == '/' {
			continue
		}
		comps := components(strings.TrimPrefix(form, "~"))
		for _, c := range comps {
			for _, pat := range p.SecretNames {
				if secretOverlap(pat, c, glob) {
					return fmt.Sprintf("reads a file named like a secret (secret_names %q)", pat)
				}
			}
		}
		if kind == '~' && len(comps) > 0 && strings.HasPrefix(comps[0], ".") && !slices.Contains(p.ReadableDotfiles, comps[0]) {
			return "reads a dot-entry of ~ not in readable_dotfiles (credentials and histories live there)"
		}
	}
	return ""
}

// secretOverlap reports whether a path component names, or as a shell
// pattern (glob) can match, an entry named like pat. A pattern counts only
// when its own literal prefix or suffix meets pat's: "*.pem" and ".*" do,
// a bare "*" or "*.txt" does not (what they match is the kernel's walk to
// find; rating every "grep x *.go" high would ask for nothing), and one
// not starting with "." does not match a dot-name (the shell's rule).
func secretOverlap(pat, name string, glob bool) bool {
	if !glob || !hasMeta(name) {
		ok, _ := path.Match(pat, name)
		return ok
	}
	if strings.HasPrefix(pat, ".") && !strings.HasPrefix(name, ".") || !overlap(pat, name, true) {
		return false
	}
	np, ns := literalPrefix(name), literalSuffix(name)
	pp, ps := literalPrefix(pat), literalSuffix(pat)
	return np != "" && pp != "" || ns != "" && ps != ""
}

// holdsSensitive reports whether a directory (or pattern) contains a place
// a sensitive path pattern names.
func (p *Policy) holdsSensitive(abs, home string, glob bool) bool {
	return holdsAny(abs, home, glob, p.SensitivePaths) || holdsAny(abs, home, glob, procSecrets)
}

// procSecrets are other processes' memory, open files and threads'
// environments (agent's API keys are there, for a step agent runs): read
// is high. The kernel holds them without a rule — Landlock keeps a
// confined step from the ptrace access they need to any process outside
// its domain — so they are not in SensitivePaths, whose /proc patterns the
// kernel's rules would list process by process; the classifier holds them
// where the host does not enforce (issue 26).
var procSecrets = []string{"/proc/*/mem", "/proc/[0-9]*/fd", "/proc/*/task/*/environ", "/proc/*/task/*/mem", "/proc/[0-9]*/task/*/fd"}

// holdsAny reports whether the tree at abs (a directory or pattern) holds
// a place one of pats names: every user's home, a directory above the
// user's, or a prefix of a pattern with a '/'.
func holdsAny(abs, home string, glob bool, pats []string) bool {
	if abs == "/home" || home != "" && strings.HasPrefix(home+"/", abs+"/") || holdsHome(abs) {
		return true
	}
	for _, form := range pathForms(abs, home) {
		fc := components(form)
		for _, pat := range pats {
			if !strings.Contains(pat, "/") || pathKind(pat) != pathKind(form) {
				continue
			}
			pc := components(pat)
			if len(fc) > len(pc) {
				continue
			}
			all := true
			for i := 0; i < len(fc) && all; i++ {
				all = overlap(pc[i], fc[i], glob)
			}
			if all {
				return true
			}
		}
	}
	return false
}

// gitRuns reports a path inside a repository's hooks or config, which git
// runs or obeys on its next command — in a work tree's .git, a bare
// repository named *.git, a submodule's or a linked work tree's git
// directory (.git/modules/NAME, .git/worktrees/NAME), with the files that
// send git to another one (commondir, a .git file) — or a Mercurial
// repository's .hg/hgrc, whose [hooks] hg runs.
func gitRuns(abs string) bool {
	if abs == "/.git" || strings.HasSuffix(abs, "/.git") || strings.HasSuffix(abs, "/.hg/hgrc") {
		return true
	}
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i, p := range parts {
		if !strings.HasSuffix(p, ".git") {
			continue
		}
		j := i + 1
		for j+1 < len(parts) && (parts[j] == "modules" || parts[j] == "worktrees") {
			j += 2
		}
		if j < len(parts) && gitControl(strings.Join(parts[j:], "/")) {
			return true
		}
	}
	return false
}

// gitControl reports rest, a path inside a git directory, as one of the
// files git runs or obeys.
func gitControl(rest string) bool {
	for _, c := range []string{"hooks", "config", "config.worktree", "info/attributes", "commondir"} {
		if rest == c || strings.HasPrefix(rest, c+"/") {
			return true
		}
	}
	return false
}
