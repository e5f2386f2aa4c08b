// Package ssh implements transport.Transport over one reused SSH connection
// (golang.org/x/crypto/ssh) with SFTP (github.com/pkg/sftp) for files, and
// resolves host settings from ssh_config files the way OpenSSH does. Nothing
// needs to be installed on the target but sshd.
package ssh
