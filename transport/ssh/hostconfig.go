package ssh

import "time"

// HostConfig is everything needed to reach one host: the effective settings
// after ~/.ssh/config (or the -F file), /etc/ssh/ssh_config and command-line
// overrides were applied, in OpenSSH's precedence (first value wins, flags
// before files). Resolve builds it; Dial consumes it.
type HostConfig struct {
	// Alias is the name the host was asked for (the "Host" pattern target).
	Alias string
	// HostName is the address to dial, with %h already expanded.
	HostName string
	// User is the remote user name.
	User string
	// Port is the TCP port (22 by default).
	Port int
	// IdentityFiles are the private key files to try, in order, with "~"
	// and %d/%u/%h/%r tokens expanded. Files that do not exist are skipped
	// when dialling (as OpenSSH does for default identities).
	IdentityFiles []string
	// IdentitiesOnly restricts agent keys to those matching IdentityFiles.
	IdentitiesOnly bool
	// IdentityAgent is the ssh-agent socket path; empty means $SSH_AUTH_SOCK,
	// "none" disables the agent.
	IdentityAgent string
	// ProxyJump holds the jump hosts to go through, first hop first, each
	// already resolved through the same configuration. Empty means direct.
	ProxyJump []*HostConfig
	// ProxyCommand is the command whose stdin and stdout carry the
	// connection instead of TCP, as configured (%h %p %r %n %k expanded
	// when dialling); run through $SHELL (else /bin/sh) like ssh does.
	// Empty means none.
	ProxyCommand string
	// ConnectTimeout bounds the TCP connect plus the SSH handshake and
	// authentication. Zero prints as "none" (like ssh -G), but Dial still
	// bounds the handshake by 30 s: a host that accepts TCP and never speaks
	// must not hang a run (golang/go#50046).
	ConnectTimeout time.Duration
	// ServerAliveInterval is the keepalive period. Zero prints as 0 (like
	// ssh -G), but Dial then uses 15 s: an agent run must notice a dead host
	// instead of waiting on it forever.
	ServerAliveInterval time.Duration
	// ServerAliveCountMax is how many unanswered keepalives mean the peer is
	// dead (OpenSSH default 3).
	ServerAliveCountMax int
	// StrictHostKeyChecking is one of "yes", "no", "accept-new", "ask"
	// (OpenSSH spellings "true"/"false" are normalised to "yes"/"no").
	StrictHostKeyChecking string
	// UserKnownHostsFiles are the known_hosts files the user owns, in order;
	// new keys are appended to the first one.
	UserKnownHostsFiles []string
	// HashKnownHosts says that keys added to the user known_hosts file
	// are written with the host name hashed (|1|salt|hash), as OpenSSH does.
	HashKnownHosts bool
	// GlobalKnownHostsFiles are read-only known_hosts files
	// (/etc/ssh/ssh_known_hosts by default).
	GlobalKnownHostsFiles []string
	// ControlPath is the operator's ControlMaster socket, "~", %-tokens
	// and ${VAR} expanded; empty when unset or "none". Dial goes through
	// the master listening there, when there is one (controlmaster.go).
	ControlPath string
	// ControlMaster is the ControlMaster setting in ssh -G's spelling:
	// "false", "true", "auto", "ask" or "autoask"; empty when unset (no). As
	// with ssh, a live master is used with false, auto and autoask; agent
	// never starts one.
	ControlMaster string

	// The fields below keep values as configured, before expansion, so
	// WriteConfig can print them the way `ssh -G` does.

	// IdentityFileSpecs are the IdentityFile values as written in the
	// config (with "~" and %-tokens unexpanded; -i files "~"-expanded), in
	// order, "none" entries included. IdentityFiles is their expansion.
	IdentityFileSpecs []string
	// ProxyJumpSpec is the ProxyJump value as configured; empty when unset
	// or "none". ProxyJump holds its resolved hops.
	ProxyJumpSpec string
	// ConnectTimeoutSet reports that ConnectTimeout was configured, so an
	// explicit 0 prints as "0" rather than "none".
	ConnectTimeoutSet bool
}
