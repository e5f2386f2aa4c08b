package safety

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// Protected is the one list of what an unapproved step may not touch, for
// one host's home directory: the classifier rates reaching it High, and the
// kernel sandbox (Landlock) denies it to a step nobody approved. Entries
// are absolute, cleaned paths; an entry covers everything below it. An
// entry may hold shell glob metacharacters in its last component
// ("/etc/ssh/ssh_host_*_key"): the enforcer expands it on the host (a
// pattern that matches nothing protects nothing there yet).
type Protected struct {
	// NoWrite: writing, creating, renaming or deleting anything here is
	// High; a step approved only by policy (--approve medium) is denied it.
	// System roots, ProtectedPaths, AutorunPaths and agent's own
	// configuration and state.
	NoWrite []string
	// NoRead: secrets. Reading them is High; a step rated safe is denied
	// them. The SensitivePaths that name a place (base-name patterns such as
	// "*.key" cannot be expressed as hierarchies: the classifier alone
	// holds those).
	NoRead []string
	// ReadableDots are the dot-entries of the home (base names) a step
	// rated safe or medium may read; SecretNames are base-name patterns
	// of secrets, found by a bounded walk of the home and the working
	// directory. The kernel denies both kinds of secret when it computes
	// its rules (confine.Spec.HideDots, FindIn).
	ReadableDots, SecretNames []string
}

// Protected returns the policy's protected hierarchies for a host whose
// home directory is home ("~" in the policy), with agent's own directories
// as this process's environment places them (XDG_CONFIG_HOME,
// XDG_STATE_HOME). It is the single source both the classifier and the
// kernel enforcement use.
func (p Policy) Protected(home string) Protected {
	home = path.Clean(home)
	abs := func(pats []string) []string {
		var out []string
		for _, pat := range pats {
			switch {
			case pat == "~":
				pat = home
			case strings.HasPrefix(pat, "~/"):
				pat = path.Join(home, pat[2:])
			case !path.IsAbs(pat):
				continue // a base-name pattern
			}
			pat = path.Clean(pat)
			if !slices.Contains(out, pat) {
				out = append(out, pat)
			}
		}
		return out
	}
	var pr Protected
	pr.NoWrite = abs(slices.Concat(p.SystemRoots, p.ProtectedPaths, p.AutorunPaths, ownDirs()))
	pr.NoRead = abs(slices.Concat(p.SensitivePaths, ownDirs()))
	pr.ReadableDots, pr.SecretNames = slices.Clone(p.ReadableDotfiles), slices.Clone(p.SecretNames)
	return pr
}

// ownDirs are agent's configuration and state directories, default and
// XDG-overridden: a step writing there could change the next run's policy
// or rewrite the audit log and undo journal, so it is High whatever the
// policy file says. On a remote host the same paths are only protected
// needlessly.
func ownDirs() []string {
	dirs := []string{"~/.config/agent", "~/.local/state/agent"}
	for _, env := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		if d := os.Getenv(env); path.IsAbs(d) {
			dirs = append(dirs, path.Join(d, "agent"))
		}
	}
	return dirs
}

// CheckPolicyFile refuses a policy (config) file that another user could
// have written: it must be owned by the user running agent (or root) and
// not writable by group or others, else a step or another account could
// rewrite what the next run trusts. fi is the opened file's Stat.
func CheckPolicyFile(name string, fi os.FileInfo) error {
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: policy file %s is writable by group or others (%s); chmod go-w it", ErrRefused, name, fi.Mode().Perm())
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("%w: policy file %s is owned by uid %d, not by you (uid %d)", ErrRefused, name, uid, os.Getuid())
	}
	return nil
}
