// Package testenv provides the real things tests talk to: an in-process SSH
// and SFTP server, a launcher for OpenSSH sshd on a loopback port, a TCP
// proxy that delays or cuts connections, and a scripted OpenAI-compatible
// Chat Completions server that rejects what real APIs reject.
package testenv
