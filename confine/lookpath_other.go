//go:build !linux

package confine

import "syscall"

// eaccessExec leaves the check to the file's mode.
func eaccessExec(string) error { return syscall.ENOSYS }
