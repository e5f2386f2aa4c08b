//go:build !unix

package executor

import (
	"io/fs"

	"github.com/pkg/sftp"
)

// infoOwner is the owner and group a transport's Stat reports, when it
// does: SFTP's does.
func infoOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	if s, ok := fi.Sys().(*sftp.FileStat); ok {
		return int(s.UID), int(s.GID), true
	}
	return 0, 0, false
}

// infoLinks is the file's hard-link count when the transport's Stat says
// it (never here).
func infoLinks(fs.FileInfo) (uint64, bool) { return 0, false }
