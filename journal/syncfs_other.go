//go:build !linux

package journal

import "syscall"

// syncFS makes the files written on dir's file system durable: sync(2)
// where there is no syncfs.
func syncFS(string) error {
	syscall.Sync()
	return nil
}
