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
