package testenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// newSigner generates an ed25519 key pair.
func newSigner() (ssh.Signer, ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate ed25519 key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("ed25519 signer: %w", err)
	}
	return signer, priv, nil
}

// writeKeyPair writes priv in OpenSSH PEM format to path (mode 0600) and its
// public key in authorized_keys format to path+".pub" (mode 0644).
func writeKeyPair(path string, priv ed25519.PrivateKey, comment string) error {
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return fmt.Errorf("marshal private key %s: %w", path, err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return fmt.Errorf("write private key: %w", err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		return fmt.Errorf("public key of %s: %w", path, err)
	}
	if err := os.WriteFile(path+".pub", authorizedLine(pub, comment), 0o644); err != nil {
		return fmt.Errorf("write public key: %w", err)
	}
	return nil
}

// authorizedLine formats pub as one authorized_keys line with a comment.
func authorizedLine(pub ssh.PublicKey, comment string) []byte {
	line := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(pub)), "\n")
	if comment != "" {
		line += " " + comment
	}
	return []byte(line + "\n")
}

// newClientKey generates a client key pair in dir and returns the private
// key's path (the public key is path+".pub") and the public key.
func newClientKey(dir string) (string, ssh.PublicKey, error) {
	_, priv, err := newSigner()
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "id_ed25519")
	if err := writeKeyPair(path, priv, "testenv-client"); err != nil {
		return "", nil, err
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		return "", nil, fmt.Errorf("client public key: %w", err)
	}
	return path, pub, nil
}

// writeClientConfig writes, in dir, a known_hosts file holding hostKey for
// addr and alias, and an ssh_config with a "Host alias" block that reaches
// addr as user with identity. It fills h's client-side fields.
func writeClientConfig(h *Host, dir, identity string) error {
	_, portStr, err := net.SplitHostPort(h.Addr)
	if err != nil {
		return fmt.Errorf("split %q: %w", h.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("port of %q: %w", h.Addr, err)
	}
	h.Port = port
	h.IdentityFile = identity

	h.KnownHosts = filepath.Join(dir, "known_hosts")
	hosts := []string{
		knownhosts.Normalize(h.Addr),
		h.Alias,
		knownhosts.Normalize(net.JoinHostPort(h.Alias, portStr)),
	}
	line := knownhosts.Line(hosts, h.HostKey) + "\n"
	if err := os.WriteFile(h.KnownHosts, []byte(line), 0o644); err != nil {
		return fmt.Errorf("write known_hosts: %w", err)
	}

	h.SSHConfig = filepath.Join(dir, "ssh_config")
	cfg := fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
`, h.Alias, port, h.User, h.IdentityFile, h.KnownHosts)
	if err := os.WriteFile(h.SSHConfig, []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("write ssh_config: %w", err)
	}
	return nil
}
