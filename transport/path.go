package transport

import (
	"path"
	"strings"
)

// ExpandHome returns p with a leading "~" or "~/" replaced by home, and a
// relative p made absolute under home. Other paths, including "~user/…"
// forms, are returned cleaned but otherwise unchanged. It uses forward
// slashes: it is for paths on POSIX hosts.
func ExpandHome(p, home string) string {
	switch {
	case p == "" || p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return path.Join(home, p[2:])
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, "~"):
		return path.Clean(p)
	default:
		return path.Join(home, p)
	}
}
