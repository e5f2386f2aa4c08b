package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteOperatorHome makes home look like an operator's home directory that
// reaches h: ~/.ssh/config with a "Host alias" block, ~/.ssh/known_hosts
// holding the host key, and the client key as ~/.ssh/id_ed25519. A program
// run with HOME=home then reaches the host by its alias. The config names its
// files by absolute path, because OpenSSH expands "~" from the password
// database, not $HOME: `ssh -F home/.ssh/config alias` works too.
func (h Host) WriteOperatorHome(home, alias string) error {
	dir := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("operator home: %w", err)
	}
	copies := map[string]string{
		h.IdentityFile:          "id_ed25519",
		h.IdentityFile + ".pub": "id_ed25519.pub",
		h.KnownHosts:            "known_hosts",
	}
	for src, name := range copies {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("operator home: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("operator home: %w", err)
		}
	}
	config := fmt.Sprintf(`# a test host from github.com/autoshell/agent/testenv
Host %s
    HostName 127.0.0.1
    Port %d
    User %s
    IdentityFile %s
    IdentitiesOnly yes
    UserKnownHostsFile %s
    StrictHostKeyChecking yes
`, alias, h.Port, h.User, filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "known_hosts"))
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o600); err != nil {
		return fmt.Errorf("operator home: %w", err)
	}
	return nil
}
