package inventory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/autoshell/agent/inventory/vault"
)

// TestDeferVault: with DeferVault a host's vaulted vars file is not read
// at load (no password needed); Decrypt reads it for the hosts given,
// and only for them; without DeferVault the load needs the password.
func TestDeferVault(t *testing.T) {
	dir := t.TempDir()
	enc, err := vault.Encrypt([]byte("secret: s3\n"), []byte("pw"), "")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"inv.ini":          []byte("[a]\nh1\n[b]\nh2\n"),
		"host_vars/h2.yml": enc,
		"group_vars/a.yml": []byte("plain: 1\n"),
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := []string{filepath.Join(dir, "inv.ini")}
	if _, err := LoadSources(src, LoadOptions{}); err == nil {
		t.Error("eager load without a password: no error")
	}
	inv, err := LoadSources(src, LoadOptions{DeferVault: true})
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := inv.Host("h1"), inv.Host("h2")
	if err := inv.Decrypt([]*Host{h1}); err != nil {
		t.Fatalf("h1 needs no vault: %v", err)
	}
	if v := inv.HostVars(h1); v["plain"] != 1 {
		t.Errorf("h1 vars %v", v)
	}
	if err := inv.Decrypt([]*Host{h2}); err == nil {
		t.Error("h2 without a password: no error")
	}
	inv, err = LoadSources(src, LoadOptions{DeferVault: true, Vault: vault.NewKeyring(vault.Secret{Password: []byte("pw")})})
	if err != nil {
		t.Fatal(err)
	}
	if v := inv.HostVars(inv.Host("h2")); v["secret"] != nil {
		t.Errorf("read before Decrypt: %v", v)
	}
	if err := inv.Decrypt([]*Host{inv.Host("h2")}); err != nil {
		t.Fatal(err)
	}
	if v := inv.HostVars(inv.Host("h2")); v["secret"] == nil {
		t.Errorf("after Decrypt: %v", v)
	} else if o, _ := inv.VarOrigin(inv.Host("h2"), "secret"); !o.Vault {
		t.Errorf("origin %+v not marked vaulted", o)
	}
}
