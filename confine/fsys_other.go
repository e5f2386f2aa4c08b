//go:build !linux

package confine

import (
	"io/fs"
	"os"
	"syscall"
)

// The file system as the rules read it (fsys_linux.go), through os.

func lstatType(p string) (fs.FileMode, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}

func statType(p string) (fs.FileMode, error) {
	_, t, err := statMode(p)
	return t, err
}

func statMode(p string) (uint32, fs.FileMode, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, 0, err
	}
	return uint32(fi.Mode().Perm()), fi.Mode().Type(), nil
}

func mtime(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.ModTime().UnixNano()
}

type dirEntry = fs.DirEntry

func readDir(d string) ([]dirEntry, error) { return os.ReadDir(d) }

func rename(from, to string) error { return os.Rename(from, to) }

// eaccessExec leaves the check to the file's mode.
func eaccessExec(string) error { return syscall.ENOSYS }

func readOnlyFS(string) bool { return false }

// ownLikeDir: the launcher runs on Linux only (fsys_linux.go).
func ownLikeDir(file string) {}
