//go:build linux

package confine

import "golang.org/x/sys/unix"

// KernelRelease is uname -r.
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "?"
	}
	return unix.ByteSliceToString(u.Release[:])
}
