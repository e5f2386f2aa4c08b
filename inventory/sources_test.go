package inventory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/inventory/vault"
)

// TestCompareAnsibleSources compares the inventories operators have
// beyond one file with Debian's Ansible: a directory (files in name
// order, a subdirectory, an inventory script, the .ini and .md files
// Ansible skips, its group_vars/ and host_vars/), -i given twice with
// conflicting group_vars, a script without _meta (--host per host), a
// host list, and --limit @FILE.
func TestCompareAnsibleSources(t *testing.T) {
	r := newAnsibleRunner(t)
	const d = "testdata/sources/"
	cases := []struct {
		name     string
		sources  []string
		patterns []string
	}{
		{"dir+file", []string{d + "dir", d + "other/hosts.yml"}, []string{
			"all", "web", "prod:!db", "edge", "cache[1]", "sub:db", "@" + d + "retry.txt", "web:@" + d + "retry.txt", "ungrouped"}},
		{"script-nometa", []string{d + "scripts/nometa.sh"}, []string{"all", "app", "solo"}},
		{"hostlist", []string{"h1, h2:2222,[::1]:22,", d + "dir/01-hosts"}, []string{"all", "ungrouped", "h*"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// Grandchild groups come in Python's set order: where the
			// seeds disagree, only the sets of hosts are compared.
			r.compareSources(t, sourceCase{sources: c.sources}, c.patterns, "0", "1", "2")
		})
	}
}

// TestLoadSourcesOrigins checks that variables from a directory name the
// file they come from.
func TestLoadSourcesOrigins(t *testing.T) {
	inv, err := LoadSources([]string{"testdata/sources/dir", "testdata/sources/other/hosts.yml"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ host, v, want string }{
		{"web1", "ansible_host", "testdata/sources/dir/01-hosts:3"},
		{"web1", "extra", "testdata/sources/other/hosts.yml:7"},
		{"web1", "http_port", "testdata/sources/other/group_vars/web.yml:1"},
		{"db1", "engine", "testdata/sources/dir/02-db.yml:7"},
		{"cache1", "size", "testdata/sources/dir/03-script.py"},
	} {
		o, ok := inv.VarOrigin(inv.Host(c.host), c.v)
		if !ok || o.String() != c.want {
			t.Errorf("VarOrigin(%s, %s) = %v, %v; want %s", c.host, c.v, o, ok, c.want)
		}
	}
}

// TestInventoryScriptBadInput: a script that hangs is killed at the
// timeout, garbage and a non-zero exit are errors naming the script and
// saying what went wrong (with the script's stderr).
func TestInventoryScriptBadInput(t *testing.T) {
	const d = "testdata/sources/scripts/"
	cases := []struct {
		script string
		want   []string
	}{
		{"hang.sh", []string{"hang.sh", "--list", "did not finish within 300ms"}},
		{"garbage.sh", []string{"garbage.sh", "--list did not print a JSON object"}},
		{"fail.sh", []string{"fail.sh", "exit status 1", "cannot reach the CMDB: connection refused"}},
		{"badhost.sh", []string{"badhost.sh", "--host h1 did not print JSON"}},
		{"notdict.sh", []string{"notdict.sh", "want a JSON object, found an array"}},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := LoadSources([]string{d + c.script}, LoadOptions{ScriptTimeout: 300 * time.Millisecond})
			if err == nil {
				t.Fatal("LoadSources succeeded")
			}
			var ie *Error
			if !errors.As(err, &ie) {
				t.Errorf("error %T, want *Error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("took %s: the script's children kept it waiting", el)
			}
		})
	}
}

// TestExecutableINIFallsBack: an executable file that is not a script
// (chmod +x by accident) is read as INI, as Ansible's next plugin would.
func TestExecutableINIFallsBack(t *testing.T) {
	f := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(f, []byte("[web]\nweb1 a=1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	inv, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if h := inv.Host("web1"); h == nil || h.Vars["a"] != 1 {
		t.Fatalf("web1 = %+v", h)
	}
}

// TestLimitFileAndMalformedPatterns: @FILE reads a retry file; a
// malformed pattern, which Ansible widens, is an error naming it.
func TestLimitFileAndMalformedPatterns(t *testing.T) {
	inv, err := ParseINI("p.ini", []byte(patternInventory))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	retry := filepath.Join(dir, "site.retry")
	if err := os.WriteFile(retry, []byte("db2.example.com\n\n  stage1 \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := inv.Limit("@" + retry)
	if err != nil || strings.Join(names(got), " ") != "stage1 db2.example.com" {
		t.Errorf("Limit(@retry) = %v, %v", names(got), err)
	}
	empty := filepath.Join(dir, "empty.retry")
	os.WriteFile(empty, []byte("\n"), 0o644)
	if got, err := inv.Limit("@" + empty); err != nil || len(got) != 0 {
		t.Errorf("Limit(@empty) = %v, %v; want nothing (Ansible: every host)", names(got), err)
	}
	for _, p := range []string{"@" + filepath.Join(dir, "missing"), "@" + dir, "@"} {
		if _, err := inv.Limit(p); err == nil {
			t.Errorf("Limit(%q) succeeded", p)
		}
	}
	for _, p := range []string{"~[", "web[", "web[1", "web]", "db:web[1", "web[1,db", "web[0:2", "[web"} {
		_, serr := inv.Select(p)
		_, lerr := inv.Limit(p)
		var mp *MalformedPattern
		if !errors.As(serr, &mp) || !errors.As(lerr, &mp) || !strings.Contains(lerr.Error(), p) {
			t.Errorf("pattern %q: Select: %v, Limit: %v; want a MalformedPattern naming it", p, serr, lerr)
		}
	}
	for _, p := range []string{"web[1]", "web[0:2]", "~web0[1-3]", "web0[!1-3]*", "[::1]:22", "db,web[1:]", "web:!db"} {
		if _, err := inv.Limit(p); err != nil {
			t.Errorf("well-formed pattern %q: %v", p, err)
		}
	}
}

// vaultKeys are testdata/vault's passwords, as --vault-id gives them.
func vaultKeys(t *testing.T) *vault.Keyring {
	t.Helper()
	var secrets []vault.Secret
	for id, f := range map[string]string{vault.DefaultID: "testdata/vault/pw", "prod": "testdata/vault/pw_prod"} {
		pw, err := vault.PasswordFromFile(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, vault.Secret{ID: id, Password: pw})
	}
	return vault.NewKeyring(secrets...)
}

// TestCompareAnsibleVault: !vault values (1.1 and 1.2 with an id), a
// vaulted group_vars file and a vaulted INI inventory decrypt to what
// Ansible decrypts them to; every such variable is marked a secret.
func TestCompareAnsibleVault(t *testing.T) {
	r := newAnsibleRunner(t)
	keys := vaultKeys(t)
	c := sourceCase{
		sources:     []string{"testdata/vault/hosts.yml", "testdata/vault/enc_hosts"},
		opts:        LoadOptions{Vault: keys},
		ansibleArgs: []string{"--vault-id", "default@testdata/vault/pw", "--vault-id", "prod@testdata/vault/pw_prod"},
		env:         []string{"VAULT_IDS=default@testdata/vault/pw,prod@testdata/vault/pw_prod"},
		decrypt:     keys,
	}
	r.compareSources(t, c, []string{"all", "db"})

	inv, err := LoadSources(c.sources, c.opts)
	if err != nil {
		t.Fatal(err)
	}
	secret := func(h, v string) bool {
		host := inv.Host(h)
		o, _ := inv.VarOrigin(host, v)
		return o.Vault || Vaulted(inv.HostVars(host)[v])
	}
	for _, hv := range [][2]string{{"db1", "db_password"}, {"db1", "api_token"}, {"app1", "conn_string"}, {"db2", "backup_key"}, {"db2", "nested"}, {"extra1", "note"}, {"extra1", "ansible_host"}} {
		if !secret(hv[0], hv[1]) {
			t.Errorf("%s's %s is not marked as a secret", hv[0], hv[1])
		}
	}
	if secret("db2", "port_note") {
		t.Error("db2's port_note (plain text) is marked as a secret")
	}
}

// TestVaultBadPassword: a wrong or missing password is an error naming
// the file (and line for a !vault value); nothing half-decrypted.
func TestVaultBadPassword(t *testing.T) {
	wrong := vault.NewKeyring(vault.Secret{ID: vault.DefaultID, Password: []byte("wrong")})
	for _, c := range []struct {
		src  string
		keys *vault.Keyring
		want string
	}{
		{"testdata/vault/hosts.yml", wrong, "testdata/vault/hosts.yml:7: !vault value: no vault password given can decrypt it"},
		{"testdata/vault/hosts.yml", nil, "--vault-password-file"},
		{"testdata/vault/enc_hosts", wrong, "testdata/vault/enc_hosts: encrypted with Ansible Vault: no vault password given"},
		{"testdata/vault/enc_hosts", nil, "no vault password was given"},
	} {
		_, err := LoadSources([]string{c.src}, LoadOptions{Vault: c.keys})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.src, err, c.want)
		}
	}
	// The vaulted group_vars file, when only the inventory's password is known.
	only := vault.NewKeyring(vault.Secret{ID: vault.DefaultID, Password: []byte("correct horse")})
	_, err := LoadSources([]string{"testdata/vault/hosts.yml"}, LoadOptions{Vault: only})
	if err == nil || !strings.Contains(err.Error(), `vault id "prod"`) {
		t.Errorf("group_vars with the wrong password: %v", err)
	}
}
