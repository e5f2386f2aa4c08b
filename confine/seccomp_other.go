//go:build !linux || !(amd64 || arm64)

package confine

// Seccomp is false: this build has seccomp filters for linux/amd64 and
// linux/arm64 only (seccomp_linux.go); Landlock confines alone.
func Seccomp() bool { return false }

func applySyscalls([]Ruleset) error { return nil }
