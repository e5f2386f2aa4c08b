package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoshell/agent/inventory/vault"
)

// vaultLimitInventory is an inventory whose db hosts' vars are vaulted:
// host_vars/db1.yml encrypted whole, group_vars/db.yml with a !vault
// value, host_vars/broken.yml vaulted with another password (so it
// cannot be decrypted with ours), web's vars plain.
func vaultLimitInventory(t *testing.T, password string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	enc := func(plain, pw string) []byte {
		t.Helper()
		b, err := vault.Encrypt([]byte(plain), []byte(pw), "")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write("inv.ini", []byte("[web]\nweb1 ansible_host=127.0.0.1\n[db]\ndb1 ansible_host=127.0.0.2\n[other]\nbroken ansible_host=127.0.0.3\n"))
	write("group_vars/web.yml", []byte("role: frontend\n"))
	write("host_vars/db1.yml", enc("db_password: hunter2-db\n", password))
	inline := enc("group-secret-value", password)
	var ind strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(inline)), "\n") {
		ind.WriteString("  " + l + "\n")
	}
	write("group_vars/db.yml", []byte("db_group_token: !vault |\n"+ind.String()))
	write("host_vars/broken.yml", enc("x: 1\n", "another password"))
	write("pw.txt", []byte(password+"\n"))
	return dir
}

// TestVaultOnlySelectedHosts: vaulted vars files are decrypted only for
// the hosts --limit selects. Without a password, hosts whose vars are
// plain run and hosts whose vars are vaulted are refused naming the file;
// a file no password opens stops only a run that selects its host.
// Ansible agrees on each case (ansible -m debug, which reads every
// selected host's vars and connects to none).
func TestVaultOnlySelectedHosts(t *testing.T) {
	const pw = "vault-pass-for-limit"
	dir := vaultLimitInventory(t, pw)
	inv := filepath.Join(dir, "inv.ini")
	keyring := vault.NewKeyring(vault.Secret{Password: []byte(pw)})
	for _, tc := range []struct {
		limit   string
		keys    *vault.Keyring
		ok      bool
		errFile string
	}{
		{"web", nil, true, ""},
		{"db", nil, false, "db1.yml"},
		{"db", keyring, true, ""},
		{"web:db", keyring, true, ""},
		{"broken", keyring, false, "broken.yml"},
		{"all", keyring, false, "broken.yml"},
		{"all:!broken", keyring, true, ""},
	} {
		name := tc.limit
		if tc.keys != nil {
			name += " with password"
		}
		hosts, err := InventoryHosts(InventorySpec{Sources: []string{inv}, Vault: tc.keys}, tc.limit, SSHOverrides{})
		if tc.ok != (err == nil) {
			t.Errorf("%s: hosts %d, error %v; want ok=%v", name, len(hosts), err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.errFile) {
			t.Errorf("%s: error %v does not name %s", name, err, tc.errFile)
		}
		for _, h := range hosts {
			switch h.Name {
			case "web1":
				if h.Vars["role"] != "frontend" {
					t.Errorf("%s: web1 vars %v", name, h.Vars)
				}
			case "db1":
				if h.Vars["db_password"] != "hunter2-db" || h.Vars["db_group_token"] != "group-secret-value" ||
					!slices.Contains(h.Secrets, "db_password") || !slices.Contains(h.Secrets, "db_group_token") {
					t.Errorf("%s: db1 vars %v secrets %v", name, h.Vars, h.Secrets)
				}
			}
		}
		ansibleAgrees(t, dir, tc.limit, tc.keys != nil, tc.ok)
	}
}

// ansibleAgrees runs Ansible's debug module over the same selection and
// checks that it succeeds or fails alike.
func ansibleAgrees(t *testing.T, dir, limit string, password, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("ansible"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ansible is not installed (.ci/run installs it)")
		}
		return
	}
	args := []string{"-i", "inv.ini", "all", "--limit", limit, "-m", "debug", "-a", "msg=x"}
	if password {
		args = append(args, "--vault-password-file", "pw.txt")
	}
	cmd := exec.Command("ansible", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if (err == nil) != ok {
		t.Errorf("ansible --limit %s (password %v): %v, want ok=%v\n%s", limit, password, err, ok, out)
	}
}
