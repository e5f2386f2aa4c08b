package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInventoryBecomeRefused: an inventory that turns become on is refused
// (agent cannot run steps as another user yet) instead of running them as
// the login user; become settings that do not turn it on are warned about.
func TestInventoryBecomeRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) InventorySpec {
		p := filepath.Join(dir, "hosts.ini")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return InventorySpec{Sources: []string{p}}
	}
	for _, body := range []string{
		"web1 ansible_become=yes ansible_become_user=root\n",
		"[web]\nweb1\n[web:vars]\nansible_become=True\n",
		"web1 ansible_sudo=1\n",
	} {
		_, err := InventoryHosts(write(body), "", SSHOverrides{})
		var ce ConfigError
		if err == nil || !strings.Contains(err.Error(), "web1 sets ansible_") || !strings.Contains(err.Error(), "no become") {
			t.Errorf("%q: %v", body, err)
		} else if !errors.As(err, &ce) {
			t.Errorf("%q: not a ConfigError: %v", body, err)
		}
	}
	hosts, err := InventoryHosts(write("web1 ansible_become=no ansible_become_user=deploy\n"), "", SSHOverrides{})
	if err != nil {
		t.Fatal(err)
	}
	warn := strings.Join(InventoryWarnings(hosts), "\n")
	if !strings.Contains(warn, "ansible_become_user") || !strings.Contains(warn, "web1") {
		t.Errorf("warnings: %q", warn)
	}
}
