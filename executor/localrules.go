package executor

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/autoshell/agent/safety"
)

// Issue 26: the file tools obey on the operator's side the rules a shell
// step obeys. upload_file reads, unless a person approves (high), nothing
// the kernel would hide from an unapproved step: an entry named like the policy's SecretNames, or a
// dot-entry of ~ not in ReadableDotfiles (the lists confine's walk uses).
// download_file over an existing file is at least high: only a person
// (or --approve all) lets it replace the operator's file.

// localReadRefusal reports why reading abs on this machine is refused,
// or nil. home is the operator's home directory, cleaned.
func localReadRefusal(p safety.Policy, abs, home string) error {
	for _, el := range strings.Split(strings.Trim(abs, "/"), "/") {
		for _, pat := range p.SecretNames {
			if ok, _ := path.Match(pat, el); ok {
				return fmt.Errorf("%s is protected on this machine: %q matches the policy's secret name %q", abs, el, pat)
			}
		}
	}
	rel, ok := strings.CutPrefix(abs, home+"/")
	if !ok || home == "/" {
		return nil
	}
	first, _, _ := strings.Cut(rel, "/")
	if strings.HasPrefix(first, ".") {
		for _, d := range p.ReadableDotfiles {
			if d == first {
				return nil
			}
		}
		return fmt.Errorf("%s is protected on this machine: ~/%s is a dot-entry of the home not in the policy's readable_dotfiles", abs, first)
	}
	return nil
}

// localReadFloor raises a to high when reading abs on this machine is
// what an unapproved step may not do (localReadRefusal): only a person,
// or --approve all, lets upload_file send it (a public key in ~/.ssh is
// an ordinary thing to upload, and asking beats refusing).
func localReadFloor(p safety.Policy, a safety.Assessment, abs, home string) safety.Assessment {
	err := localReadRefusal(p, abs, home)
	if err == nil || a.Level >= safety.High && slices.Contains(a.Reasons, err.Error()) {
		return a
	}
	a.Level = max(a.Level, safety.High)
	a.Reasons = append(a.Reasons, err.Error())
	return a
}

// localWriteRefusal reports why download_file may not write abs (and
// real, where its links lead) on this machine, whatever the approval, or
// nil. A download writes only under the working directory cwd and the
// policy's AllowWrite (--allow-write), as the sandbox lets a command
// write; never under what Protected(home) keeps from every write
// (protected and autorun paths, agent's own directories), nor a
// dot-entry of the home itself (a medium shell step cannot create one:
// the kernel grants it no write on ~).
func localWriteRefusal(p safety.Policy, abs, real, home, cwd string) error {
	pr := p.Protected(home)
	allowed := &safety.Permissions{Write: safety.Globs{Limited: true, List: p.AllowWrite}}
	for _, q := range uniq(abs, real) {
		for _, entry := range pr.NoWrite {
			if under(q, entry) {
				return fmt.Errorf("%s is protected on this machine (under %s): a download may not write there", q, entry)
			}
		}
		if rel, ok := strings.CutPrefix(q, home+"/"); ok && home != "/" && strings.HasPrefix(rel, ".") && !strings.Contains(rel, "/") {
			return fmt.Errorf("%s is a dot-entry of the home on this machine: a download may not write there", q)
		}
		// A working directory of / would be everything (MCP clients may
		// start agent there): it grants nothing, --allow-write does.
		if cwd != "/" && under(q, cwd) || len(p.AllowWrite) > 0 && len(allowed.Check(safety.Needs{Writes: []safety.Touch{{Path: q}}}, home)) == 0 {
			continue
		}
		if cwd == "/" {
			return fmt.Errorf("%s: the working directory is /, which grants a download nothing; give --allow-write on this machine", q)
		}
		return fmt.Errorf("%s is outside the working directory (%s) and --allow-write on this machine: a download writes only there", q, cwd)
	}
	return nil
}

// under reports whether p is entry or below it; entry's elements may be
// path.Match patterns (a protected entry's last one may be).
func under(p, entry string) bool {
	if entry == "" || !path.IsAbs(entry) {
		return false
	}
	if entry == "/" {
		return true
	}
	es := strings.Split(strings.Trim(entry, "/"), "/")
	ps := strings.Split(strings.Trim(p, "/"), "/")
	if len(ps) < len(es) || p == "/" {
		return false
	}
	for i, e := range es {
		if ok, err := path.Match(e, ps[i]); !ok || err != nil {
			if e != ps[i] {
				return false
			}
		}
	}
	return true
}

// localWriteFloor raises a to high when abs already exists: a download
// never replaces the operator's file without approval, whatever
// overwrite says.
func localWriteFloor(a safety.Assessment, abs string) safety.Assessment {
	if _, err := os.Lstat(abs); err != nil || a.Level >= safety.High {
		return a
	}
	a.Level = safety.High
	a.Reasons = append(a.Reasons, abs+" exists on this machine: replacing it needs approval")
	return a
}
