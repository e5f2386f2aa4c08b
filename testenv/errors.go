package testenv

import "errors"

// ErrSSHDNotFound means no OpenSSH sshd binary was found (see SSHDPath).
var ErrSSHDNotFound = errors.New("sshd not found")

// errClosed is returned when a server or proxy is used after Close.
var errClosed = errors.New("closed")
