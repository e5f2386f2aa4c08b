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

// clientFiles are the client-side files that reach a test host.
type clientFiles struct {
	Identity   string // private key; Identity+".pub" is the public key
	KnownHosts string
	SSHConfig  string
	pub        ssh.PublicKey
}

// writeClientFiles generates a client key in dir and writes known_hosts and
// an ssh_config with a "Host alias" block for the host at addr.
func writeClientFiles(dir, alias, addr, user string, hostKey ssh.PublicKey) (clientFiles, error) {
	var f clientFiles
	_, priv, err := newSigner()
	if err != nil {
		return f, err
	}
	f.Identity = filepath.Join(dir, "id_ed25519")
	if err := writeKeyPair(f.Identity, priv, "testenv-client"); err != nil {
		return f, err
	}
	if f.pub, err = ssh.NewPublicKey(priv.Public()); err != nil {
		return f, fmt.Errorf("client public key: %w", err)
	}

	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return f, fmt.Errorf("split %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return f, fmt.Errorf("port of %q: %w", addr, err)
	}
	f.KnownHosts = filepath.Join(dir, "known_hosts")
	hosts := []string{
		knownhosts.Normalize(addr),
		alias,
		knownhosts.Normalize(net.JoinHostPort(alias, portStr)),
	}
	line := knownhosts.Line(hosts, hostKey) + "\n"
	if err := os.WriteFile(f.KnownHosts, []byte(line), 0o644); err != nil {
		return f, fmt.Errorf("write known_hosts: %w", err)
	}

	f.SSHConfig = filepath.Join(dir, "ssh_config")
	cfg := fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
`, alias, port, user, f.Identity, f.KnownHosts)
	if err := os.WriteFile(f.SSHConfig, []byte(cfg), 0o644); err != nil {
		return f, fmt.Errorf("write ssh_config: %w", err)
	}
	return f, nil
}
