package engine

import (
	"strings"

	"github.com/autoshell/agent/safety"
)

// AllowWrite is the write limit of p.AllowWrite (--allow-write, the
// config's limits: allow_write) as declared permissions: writes only
// there, reads, programs and connections not limited; nil when none is
// given. A path without pattern characters is its whole tree. The paths
// must have passed ParseAllowWrite.
func AllowWrite(p safety.Policy) *safety.Permissions {
	if len(p.AllowWrite) == 0 {
		return nil
	}
	perms := &safety.Permissions{Write: safety.Globs{Limited: true}, Source: "--allow-write"}
	for _, g := range p.AllowWrite {
		perms.Write.List = append(perms.Write.List, g)
	}
	return perms
}

// ParseAllowWrite checks an --allow-write path (absolute or "~/…", a
// glob allowed) and returns it as a permission: a plain path stands for
// itself and everything under it.
func ParseAllowWrite(s string) (string, error) {
	g, err := safety.ParsePathGlob(s)
	if err != nil {
		return "", err
	}
	if !strings.ContainsAny(g, "*?[\\") {
		g = strings.TrimSuffix(g, "/") + "/**"
	}
	return g, nil
}
