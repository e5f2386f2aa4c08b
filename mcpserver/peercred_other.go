//go:build !linux

package mcpserver

import (
	"errors"
	"net"
)

// peerUID is not known off Linux: every peer is refused.
func peerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("peer credentials are read on Linux only")
}

func umask(m int) int { return m }
