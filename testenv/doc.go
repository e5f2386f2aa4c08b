// Package testenv owns the real things tests talk to: an in-process SSH/SFTP
// server, a launcher for a real OpenSSH sshd, and a fault-injecting TCP proxy,
// all on loopback with generated keys and temporary files.
package testenv
