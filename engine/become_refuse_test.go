package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInventoryBecomeVars: the inventory's become settings are acted on
// (ResolveBecome) and so never named by the unused-variable warning;
// what agent cannot act on — Ansible 1's ansible_sudo/ansible_su, a
// method other than sudo, a user that is no user name — refuses the
// selection naming the variable and the host.
func TestInventoryBecomeVars(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) InventorySpec {
		p := filepath.Join(dir, "hosts.ini")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return InventorySpec{Sources: []string{p}}
	}
	for body, want := range map[string]string{
		"web1 ansible_sudo=1\n":                                  "web1 sets ansible_sudo=1",
		"web1 ansible_su=yes\n":                                  "web1 sets ansible_su=yes",
		"web1 ansible_become=yes ansible_become_method=su\n":     "ansible_become_method",
		"web1 ansible_become=yes ansible_become_method=doas\n":   "ansible_become_method",
		"web1 ansible_become=yes ansible_become_user='-r x'\n":   "ansible_become_user",
		"web1 ansible_become=maybe\n":                            "ansible_become",
		"web1 ansible_become=yes ansible_become_flags=--askpass": "ansible_become_flags",
	} {
		_, err := InventoryHosts(write(body), "", SSHOverrides{})
		var ce ConfigError
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "web1") {
			t.Errorf("%q: %v, want an error naming web1 and %s", body, err, want)
		} else if !errors.As(err, &ce) {
			t.Errorf("%q: not a ConfigError: %v", body, err)
		}
	}
	hosts, err := InventoryHosts(write("web1 ansible_become=yes ansible_become_user=deploy ansible_become_password=s3cret99 ansible_sudo_flags=-H ansible_become_exe=/usr/bin/sudo ansible_sudo=no\n"), "", SSHOverrides{})
	if err != nil {
		t.Fatal(err)
	}
	if w := InventoryWarnings(hosts); len(w) != 0 {
		t.Errorf("warnings about become variables agent acts on: %q", w)
	}
	hb, err := ResolveBecome(hosts[0], Become{User: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	if !hb.All || hb.Config.User != "deploy" || hb.Config.Password != "s3cret99" || hb.Config.Exe != "/usr/bin/sudo" || strings.Join(hb.Config.Flags, " ") != "-H" {
		t.Errorf("resolved %+v", hb)
	}
}
