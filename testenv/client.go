package testenv

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/crypto/ssh"
)

// ClientConfig returns an x/crypto client configuration that logs in as
// h.User with h.IdentityFile and accepts only h.HostKey.
func (h Host) ClientConfig() (*ssh.ClientConfig, error) {
	pem, err := os.ReadFile(h.IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("read identity: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		return nil, fmt.Errorf("parse identity %s: %w", h.IdentityFile, err)
	}
	return &ssh.ClientConfig{
		User:            h.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey),
		// Only the host key's algorithm, as OpenSSH asks for what
		// known_hosts holds: Dropbear advertises RSA without an RSA key
		// and fails when a client picks it.
		HostKeyAlgorithms: []string{h.HostKey.Type()},
		Timeout:           10 * time.Second,
	}, nil
}

// Dial connects to the host with ClientConfig.
func (h Host) Dial() (*ssh.Client, error) {
	cfg, err := h.ClientConfig()
	if err != nil {
		return nil, err
	}
	c, err := ssh.Dial("tcp", h.Addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("dial %s (%s): %w", h.Alias, h.Addr, err)
	}
	return c, nil
}
