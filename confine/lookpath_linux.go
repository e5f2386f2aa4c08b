//go:build linux

package confine

import "golang.org/x/sys/unix"

// eaccessExec checks that the process may execute file, by its effective
// IDs.
func eaccessExec(file string) error {
	return unix.Faccessat(unix.AT_FDCWD, file, unix.X_OK, unix.AT_EACCESS)
}
