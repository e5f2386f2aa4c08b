// Package explain reads a confined command's stderr for the kernel's
// refusals and says, for the model, what was blocked and why. It is
// agent's side of package confine, kept out of it so that the launcher,
// which links confine, does not link regexp (docs/decisions.md, "The
// launcher kept small").
package explain

import (
	"path"
	"regexp"
	"strings"

	"github.com/autoshell/agent/confine"
)

// deniedLine matches what programs print when the kernel refuses them.
var deniedLine = regexp.MustCompile(`(?i)permission denied|operation not permitted`)

// pathInLine finds the file a message names: quoted, or a bare absolute or
// home path.
var pathInLine = regexp.MustCompile("['‘\"`]([~/][^'’\"`]*)['’\"`]|(?:^|[\\s:])([~/][^\\s:'\"]*)")

// Kernel returns the observation that tells the model a command confined
// at level l was blocked by the kernel, from the command's stderr: what it
// tried ("blocked: write to ~/.bashrc outside what a safe step may do"),
// or, when stderr shows a refusal without naming a file, that the refusal
// may be the kernel's. "" when stderr shows no refusal. home shortens
// paths to "~/…".
func Kernel(l confine.Level, s confine.Spec, stderr, home string) string {
	if l == confine.None {
		return ""
	}
	if why := syscallRefusal(s, stderr); why != "" {
		return blocked(why, l)
	}
	if s.Syscalls == confine.SyscallsOwn && modeDenied.MatchString(stderr) {
		// The filter cannot be told from the kernel's own refusal (a
		// file of another owner): say what the filter refuses.
		return "[note: this step ran confined by the kernel to what a " + l.String() + " step may do: its chmod may not give every " +
			"user write access (o+w, 777, 666, 1777) nor set a set-user-ID or set-group-ID bit (Operation not permitted); " +
			"if the mode asked for one, take a narrower one (g+w, 775, 664) or ask for approval]"
	}
	for _, line := range strings.Split(stderr, "\n") {
		if !deniedLine.MatchString(line) || strings.HasPrefix(line, confine.LaunchPrefix) {
			continue
		}
		low := strings.ToLower(line)
		switch {
		case strings.Contains(low, "kill"):
			return blocked("signal to a process outside the step", l)
		case strings.Contains(low, "connect") || strings.Contains(low, "/dev/tcp") || strings.Contains(low, "port "):
			if !s.Net {
				return blocked("network connection", l)
			}
		}
		// The file is the last one named before the refusal ("/bin/sh: 1:
		// cannot create /x: Permission denied" names /x).
		before := line[:deniedLine.FindStringIndex(line)[0]]
		ms := pathInLine.FindAllStringSubmatch(before, -1)
		if ms == nil {
			continue
		}
		m := ms[len(ms)-1]
		p := strings.TrimRight(m[1]+m[2], ":")
		// A write refused where reads are refused too (~/.ssh) is told
		// as the write it was.
		writing := strings.Contains(low, "cannot create") || strings.Contains(low, "cannot remove") ||
			strings.Contains(low, "cannot move") || strings.Contains(low, "cannot overwrite")
		if s.Write && writing && under(p, home, s.NoWrite) {
			return blocked("write to "+short(p, home), l)
		}
		if under(p, home, s.NoRead) || s.Hides(abs(p, home)) {
			return blocked("read of "+short(p, home), l)
		}
		if !s.Write || under(p, home, s.NoWrite) {
			return blocked("write to "+short(p, home), l)
		}
		if dir := path.Dir(abs(p, home)); holdsProtected(dir, s.NoWrite) {
			return "[blocked: " + short(p, home) + " cannot be created, removed or renamed by a " + l.String() +
				" step: " + short(dir, home) + " holds protected files, and the kernel's rules cover a whole directory, not names in it" +
				" (a medium step may change the files that exist there and anything in its subdirectories; write_file may create a new name directly in ~ that does not start with \".\")," +
				" work in an existing subdirectory, or ask for approval]"
		}
	}
	if deniedLine.MatchString(stderr) {
		return "[note: this step ran confined by the kernel to what a " + l.String() + " step may do (" + allows(l) +
			"); the refusal above may be the kernel's — a step that needs more must be approved by a person]"
	}
	return ""
}

// What programs print when the seccomp filter (confine.Spec.Syscalls)
// refused them: a socket at all (a safe step has no network: a client
// that reports the refusal as its own failure to connect or resolve
// counts), a change to another process (renice, ionice, chrt, taskset,
// prlimit), a file's metadata (chmod, chown, touch -d, setfattr,
// chattr).
var (
	netFailure   = regexp.MustCompile(`(?i)/dev/udp/|couldn't connect|failed to connect|could not resolve|name resolution|network is unreachable`)
	socketWord   = regexp.MustCompile(`(?i)\bsocket\b`)
	othersDenied = regexp.MustCompile(`(?i)(set priority|ioprio_set|policy|affinity|resource limit|sched_set|setpriority).*operation not permitted`)
	modeDenied   = regexp.MustCompile(`(?i)(chang(e|ing) (permissions|mode)|set(ting)? (permissions|mode)|chmod).*operation not permitted`)
	metaDenied   = regexp.MustCompile(`(?i)(changing (permissions|ownership|group)|setting times|setting attributes|set(ting)? (extended )?attributes?|setfattr|setxattr|chattr).*operation not permitted`)
)

// syscallRefusal says what the filter of s refused, from stderr; "" when
// stderr shows none.
func syscallRefusal(s confine.Spec, stderr string) string {
	switch {
	case s.Syscalls == "":
		return ""
	case !s.Net && (netFailure.MatchString(stderr) || socketWord.MatchString(stderr) && deniedLine.MatchString(stderr)):
		return "network connection (no socket but a local one)"
	case othersDenied.MatchString(stderr):
		return "change to another process's priority, scheduling, affinity or limits"
	case s.Syscalls == confine.SyscallsRead && metaDenied.MatchString(stderr):
		return "change to a file's mode, owner, times or attributes"
	}
	return ""
}

func blocked(what string, l confine.Level) string {
	return "[blocked: " + what + " outside what a " + l.String() + " step may do (" + allows(l) +
		"); ask for approval or take another way]"
}

func allows(l confine.Level) string {
	if l == confine.ReadOnly {
		return "read-only: no writes or metadata changes, no network, no secrets, no signals or changes to other processes"
	}
	return "no writes to protected files, no secrets, no signals or changes to other processes"
}

// abs is p ("~/…" or absolute) absolute and clean.
func abs(p, home string) string {
	if strings.HasPrefix(p, "~/") || p == "~" {
		p = home + p[1:]
	}
	return path.Clean(p)
}

// holdsProtected reports whether a member of hier (globs in their last
// component) lies strictly below dir: no rule may grant creating entries
// in dir, since a rule on dir covers them too.
func holdsProtected(dir string, hier []string) bool {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for _, h := range hier {
		if strings.HasPrefix(h, prefix) {
			return true
		}
	}
	return false
}

// under reports whether p (absolute or "~/…") lies in one of the
// hierarchies (globs in their last component).
func under(p, home string, hier []string) bool {
	p = abs(p, home)
	for _, h := range hier {
		for q := p; ; q = path.Dir(q) {
			if ok, _ := path.Match(h, q); ok {
				return true
			}
			if q == "/" || q == "." {
				break
			}
		}
	}
	return false
}

func short(p, home string) string {
	if home != "" && home != "/" && p == home {
		return "~"
	}
	if home != "" && home != "/" && strings.HasPrefix(p, home+"/") {
		return "~" + p[len(home):]
	}
	return p
}

// Sandbox returns the observation that tells the model a command
// was blocked by the operator's sandbox (--sandbox), whose rules rs are,
// from the command's stderr: "blocked by the sandbox: write to /etc/x
// outside the allowed paths"; "" when stderr shows no refusal the sandbox
// explains.
//
// resolve, when set, gives a path as it really is on the host (symbolic
// links and ".." followed): a write through a link that leads outside is
// reported with where it leads.
func Sandbox(rs confine.Ruleset, stderr, home string, resolve func(string) string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if !deniedLine.MatchString(line) || strings.HasPrefix(line, confine.LaunchPrefix) {
			continue
		}
		low := strings.ToLower(line)
		if !rs.Spec.Net && (strings.Contains(low, "connect") || strings.Contains(low, "/dev/tcp") || strings.Contains(low, "port ")) {
			return sandboxBlocked("network connection", rs, home)
		}
		before := line[:deniedLine.FindStringIndex(line)[0]]
		ms := pathInLine.FindAllStringSubmatch(before, -1)
		if ms == nil {
			continue
		}
		m := ms[len(ms)-1]
		p := strings.TrimRight(m[1]+m[2], ":")
		if strings.HasPrefix(p, "~/") || p == "~" {
			p = home + p[1:]
		}
		p = path.Clean(p)
		real, show := p, Short(p, home)
		if resolve != nil {
			if real = resolve(p); real != p {
				show += " (which is " + Short(real, home) + ")"
			}
		}
		switch {
		case !rs.Allows(real, false):
			return sandboxBlocked("read of "+show, rs, home)
		case !rs.Allows(real, true):
			return sandboxBlocked("write to "+show, rs, home)
		}
	}
	return ""
}

func sandboxBlocked(what string, rs confine.Ruleset, home string) string {
	return "[blocked by the sandbox: " + what + " outside the allowed paths (" + SandboxAllows(rs, home) + ")]"
}

// SandboxAllows says what a sandbox with rules rs allows.
func SandboxAllows(rs confine.Ruleset, home string) string {
	var w []string
	for _, p := range rs.Spec.Writable {
		w = append(w, Short(p, home))
	}
	s := "writes only under " + strings.Join(w, ", ")
	if len(rs.Spec.Readable) > 0 {
		s += ", reads only there and in the system's directories"
	}
	if !rs.Spec.Net {
		s += ", no network"
	}
	return s
}

// Short writes p from "~" when it lies under home.
func Short(p, home string) string { return short(p, home) }
