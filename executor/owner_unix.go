//go:build unix

package executor

import (
	"io/fs"
	"syscall"

	"github.com/pkg/sftp"
)

// infoOwner is the owner and group a transport's Stat reports, when it
// does: the local file system's and SFTP's do, become's does not.
func infoOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	switch s := fi.Sys().(type) {
	case *syscall.Stat_t:
		return int(s.Uid), int(s.Gid), true
	case *sftp.FileStat:
		return int(s.UID), int(s.GID), true
	}
	return 0, 0, false
}

// infoLinks is the file's hard-link count when the transport's Stat says
// it (this machine's does; SFTP's does not).
func infoLinks(fi fs.FileInfo) (uint64, bool) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink), true
	}
	return 0, false
}
