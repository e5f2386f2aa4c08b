package safety

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// maxHostLinks bounds the host's links AnalyzeResolved follows.
const maxHostLinks = maxTouched

// AnalyzeResolved is Analyze for a command whose files (Analyze's Touches)
// are, on the host it runs on, where rs says: each file the command reads
// or writes is also rated where it really is, by the same rules (a write
// to a protected or system path is High, a read of a secret is High; a
// cd into a link is followed, find's trees are trees). A file whose real
// place is not known is rated as if it were protected: High to write, at
// least Medium to read. It never rates a command lower than Analyze does.
// The Touches it returns hold the real places too.
func (p Policy) AnalyzeResolved(cmd, home string, rs []Touch) Analysis {
	return p.AnalyzeResolvedParsed(ParseCommand(cmd), home, rs)
}

// AnalyzeResolvedParsed is AnalyzeResolved for a command parsed once for
// the step (ParseCommand): it parses nothing an analysis of cmd before
// it parsed.
func (p Policy) AnalyzeResolvedParsed(cmd *Command, home string, rs []Touch) Analysis {
	base := p.analyze(cmd, home, nil)
	if len(rs) == 0 || base.IfJournaled.Level == High { // high whatever is journaled
		return base
	}
	host := &hostLinks{to: map[string][]string{}, unknown: map[string]string{}}
	for i, r := range rs {
		if i >= maxHostLinks {
			an := p.analyze(cmd, home, nil)
			an.add(High, fmt.Sprintf("more than %d files whose symbolic links on the host lead elsewhere", maxHostLinks))
			return an
		}
		key := r.Path
		if key == "~" || strings.HasPrefix(key, "~/") {
			key = path.Join(homeStandIn, key[1:])
		}
		switch {
		case r.Unresolved != "":
			host.unknown[key] = "where it leads on the host is not known (" + r.Unresolved + "): rated as a protected path"
		case !cleanAbsolute(r.Real):
			host.unknown[key] = fmt.Sprintf("where it leads on the host is not known (the host answered %q): rated as a protected path", r.Real)
		case r.Real != key && !slices.Contains(host.to[key], r.Real):
			host.to[key] = append(host.to[key], r.Real)
		}
	}
	if len(base.LinkProbes) > 0 {
		p = p.protectLinkTargets(rs, home, base.LinkProbes)
	}
	an := p.analyze(cmd, home, host)
	if an.Level < base.Level { // cannot happen: places only grow
		an.Assessment = base.Assessment
	}
	if an.IfJournaled.Level < base.IfJournaled.Level {
		an.IfJournaled = base.IfJournaled
	}
	if an.Level > base.Level {
		// Say where the links lead: the rules' reasons name the words.
		var keys []string
		for k := range host.to {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i == 3 {
				an.add(an.Level, fmt.Sprintf("and %d more symbolic links on the host", len(keys)-i))
				break
			}
			an.add(an.Level, fmt.Sprintf("%s leads to %s on the host (symbolic links)", fromHome([]string{k})[0], strings.Join(host.to[k], ", ")))
		}
	}
	return an
}

// hostLinks are where the host's symbolic links lead the places a command
// names (AnalyzeResolved): place → real paths, or place → why unknown.
// A nil *hostLinks has none.
type hostLinks struct {
	to      map[string][]string // several for a pattern: its directory, and links it matches
	unknown map[string]string
}

func (h *hostLinks) targets(p string) []string {
	if h == nil {
		return nil
	}
	return h.to[p]
}

func (h *hostLinks) unknownWhy(p string) (string, bool) {
	if h == nil {
		return "", false
	}
	why, ok := h.unknown[p]
	return why, ok
}

// cleanAbsolute reports whether p is an absolute, cleaned path without
// NUL bytes.
func cleanAbsolute(p string) bool {
	return p != "" && path.IsAbs(p) && path.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// metadataWriters change a file's mode, owner, times, access lists or
// attributes: what Landlock does not cover, so the classifier alone
// holds them on the targets of protected links (Analysis.LinkProbes).
var metadataWriters = []string{"chmod", "chown", "chgrp", "touch", "setfacl", "setfattr", "chattr"}

// LinkProbes are the protected and autorun paths in the home directory
// that a link may stand for or lie in (no patterns): ~/.bashrc, ~/.ssh,
// …, written from "~".
func (p *Policy) LinkProbes() []string { return p.linkProbes() }

// linkProbes are the protected and autorun paths in the home directory
// that a link may stand for (no patterns): ~/.bashrc, ~/.ssh, …
func (p *Policy) linkProbes() []string {
	var out []string
	for _, q := range slices.Concat(p.ProtectedPaths, p.AutorunPaths, ownDirs()) {
		if strings.HasPrefix(q, "~/") && !strings.ContainsAny(q, "*?[") && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// protectLinkTargets returns p with the real places of the protected
// paths among rs that are links on the host (~/.bashrc →
// /home/u/dotfiles/bashrc) protected too, for a command that changes
// metadata; p itself when there are none.
func (p Policy) protectLinkTargets(rs []Touch, home string, probes []string) Policy {
	var extra []string
	for _, r := range rs {
		if !slices.Contains(probes, r.Path) || r.Unresolved != "" || !cleanAbsolute(r.Real) {
			continue
		}
		real := r.Real
		if home != "" {
			if rest, ok := strings.CutPrefix(real, home+"/"); ok {
				real = "~/" + rest
			}
		}
		if real != r.Path && !slices.Contains(extra, real) {
			extra = append(extra, real)
		}
	}
	if len(extra) == 0 {
		return p
	}
	p.ProtectedPaths = slices.Concat(p.ProtectedPaths, extra)
	return p
}
