package testenv

import (
	"golang.org/x/crypto/ssh"
)

// Host describes an SSH test host — the in-process server (NewSSHServer) or
// a real OpenSSH sshd (StartSSHD) — and the client-side files that reach it.
// Everything is on loopback and in temporary directories.
type Host struct {
	// Alias is the "Host" name that SSHConfig defines for this host.
	Alias string
	// Addr is "127.0.0.1:port"; Port is its port.
	Addr string
	Port int
	// User is the login user; Home is that user's home directory on the host
	// (what "~" means there).
	User string
	Home string
	// IdentityFile is the path of an unencrypted ed25519 private key the host
	// accepts for User; its public key is IdentityFile+".pub".
	IdentityFile string
	// KnownHosts is a known_hosts file holding the host's key for
	// "[127.0.0.1]:port" (and the alias).
	KnownHosts string
	// SSHConfig is an ssh_config file with a "Host Alias" block: HostName,
	// Port, User, IdentityFile, IdentitiesOnly yes, UserKnownHostsFile
	// KnownHosts, StrictHostKeyChecking yes. `ssh -F SSHConfig Alias true`
	// works against the host.
	SSHConfig string
	// HostKey is the host's public key.
	HostKey ssh.PublicKey
}
