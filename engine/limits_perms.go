package engine

import (
	"github.com/autoshell/agent/safety"
)

// AllowWrite is the write limit of p.AllowWrite (--allow-write, the
// config's limits.allow_write and safety.sandbox.allow_write: one list) as
// declared permissions: writes only there, reads, programs and
// connections not limited; nil when none is given. A path without pattern
// characters is its whole tree. The paths must have passed
// ParseAllowWrite.
//
// Under the sandbox (on or strict) the list is what the kernel lets every
// command write beside the working and temp directories, and the file
// tools are checked against the same rules, so it is not also a
// permission (which would leave out those directories): nil. Under
// --sandbox=best-effort a host may run without the sandbox, so the
// permission holds.
func AllowWrite(p safety.Policy) *safety.Permissions {
	if len(p.AllowWrite) == 0 || p.Sandbox.On() && p.Sandbox.Mode != safety.SandboxBestEffort {
		return nil
	}
	perms := &safety.Permissions{Write: safety.Globs{Limited: true}, Source: "--allow-write"}
	for _, g := range p.AllowWrite {
		perms.Write.List = append(perms.Write.List, g)
	}
	return perms
}

// CheckSandbox refuses, when the sandbox is on, a write limit it cannot
// open as given (a pattern before a path's last element).
func CheckSandbox(p safety.Policy) error {
	if !p.Sandbox.On() {
		return nil
	}
	for _, g := range p.AllowWrite {
		if _, err := safety.SandboxPath(g); err != nil {
			return err
		}
	}
	return nil
}

// ParseAllowWrite checks an --allow-write path (absolute or "~/…", a
// glob allowed) and returns it as a permission: a plain path stands for
// itself and everything under it.
func ParseAllowWrite(s string) (string, error) { return safety.ParseWritePath(s) }
