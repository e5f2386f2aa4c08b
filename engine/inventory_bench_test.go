package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSelectHosts2000 selects 2,000 inventory hosts whose
// ~/.ssh/config has one Host block per alias (bench/fanout's set-up): the
// cost of resolving every host's SSH settings in one batch.
func BenchmarkSelectHosts2000(b *testing.B) {
	const n = 2000
	dir := b.TempDir()
	var cfg, inv strings.Builder
	inv.WriteString("[fanout]\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&cfg, "Host h%04d\n  HostName 127.0.0.1\n  Port %d\n", i, 40000+i%8)
		fmt.Fprintf(&inv, "h%04d\n", i)
	}
	cfg.WriteString("Host *\n  User op\n  IdentityFile /keys/id\n  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n")
	sshConfig := filepath.Join(dir, "ssh_config")
	writeInvFile(b, sshConfig, cfg.String())
	invFile := filepath.Join(dir, "hosts.ini")
	writeInvFile(b, invFile, inv.String())
	b.ResetTimer()
	for range b.N {
		hosts, err := SelectHosts(InventorySpec{Sources: []string{invFile}}, "", SSHOverrides{ConfigFile: sshConfig})
		if err != nil {
			b.Fatal(err)
		}
		if len(hosts) != n || hosts[n-1].SSH.Port != 40000+n%8 {
			b.Fatalf("got %d hosts, last %+v", len(hosts), hosts[len(hosts)-1].SSH)
		}
	}
}
