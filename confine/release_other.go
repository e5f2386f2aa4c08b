//go:build !linux

package confine

// KernelRelease is uname -r.
func KernelRelease() string { return "?" }
