package vault

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecryptAnsibleVault decrypts what Debian's ansible-vault wrote
// (testdata/v11: format 1.1; v12: 1.2 with the vault id "ops").
func TestDecryptAnsibleVault(t *testing.T) {
	want, _ := os.ReadFile("testdata/plain11")
	for _, f := range []string{"testdata/v11", "testdata/v12"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !IsEncrypted(data) {
			t.Fatalf("%s: not seen as encrypted", f)
		}
		got, err := NewKeyring(Secret{ID: "other", Password: []byte("nope")}, Secret{ID: DefaultID, Password: []byte("pw one")}).Decrypt(data)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: Decrypt = %q, %v; want %q", f, got, err, want)
		}
	}
}

// TestWrongPassword: a wrong password is told apart, and names the id.
func TestWrongPassword(t *testing.T) {
	data, _ := os.ReadFile("testdata/v12")
	_, err := NewKeyring(Secret{ID: "ops", Password: []byte("pw two")}).Decrypt(data)
	if !errors.Is(err, ErrWrongPassword) || !strings.Contains(err.Error(), `"ops"`) {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := (*Keyring)(nil).Decrypt(data); !errors.Is(err, ErrNoSecret) {
		t.Errorf("no keyring: %v", err)
	}
}

// TestAnsibleDecryptsOurs: ansible-vault decrypts what Encrypt writes,
// both formats.
func TestAnsibleDecryptsOurs(t *testing.T) {
	bin, err := exec.LookPath("ansible-vault")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ansible-vault is missing and CI=true")
		}
		t.Skip("ansible-vault is missing")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("s3cret\n"), 0o600)
	plain := []byte("exactly sixteen!") // a whole block: padding adds one
	for _, id := range []string{"", "prod"} {
		enc, err := Encrypt(plain, []byte("s3cret"), id)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "f"+id)
		os.WriteFile(f, enc, 0o600)
		vid := "default@" + pw
		if id != "" {
			vid = id + "@" + pw
		}
		cmd := exec.Command(bin, "decrypt", "--vault-id", vid, "--output", "-", f)
		cmd.Env = append(os.Environ(), "HOME="+dir, "ANSIBLE_CONFIG="+filepath.Join(dir, "none.cfg"))
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, plain) {
			t.Errorf("ansible-vault decrypt (id %q): %v\n%s", id, err, out)
		}
	}
}

// TestParseBadInput: damaged envelopes are clear errors.
func TestParseBadInput(t *testing.T) {
	good, _ := os.ReadFile("testdata/v11")
	lines := strings.SplitN(string(good), "\n", 2)
	cases := map[string]string{
		"$ANSIBLE_VAULT;1.0;AES\nab":                 "unsupported Ansible Vault format",
		"$ANSIBLE_VAULT;1.1;DES\nab":                 "unsupported Ansible Vault cipher",
		"$ANSIBLE_VAULT;1.2;AES256\nab":              "without a vault id",
		"$ANSIBLE_VAULT;1.1;AES256;x\nab":            "only 1.2",
		"$ANSIBLE_VAULT;1.1;AES256\nzz":              "not hex",
		"$ANSIBLE_VAULT;1.1;AES256\n6162":            "lacks salt",
		lines[0] + "\n" + lines[1][:len(lines[1])/2]: "",
		"hello": "not an Ansible Vault header",
	}
	for in, want := range cases {
		_, err := NewKeyring(Secret{ID: DefaultID, Password: []byte("pw one")}).Decrypt([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decrypt(%.40q) = %v; want an error saying %q", in, err, want)
		}
	}
}

// TestPasswordFromFile: a file's content without surrounding space; an
// executable's stdout without trailing line breaks; empty is an error.
func TestPasswordFromFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "pw")
	os.WriteFile(plain, []byte("  pass word \n\n"), 0o600)
	script := filepath.Join(dir, "pw.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf ' from script \\n'\n"), 0o700)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	failing := filepath.Join(dir, "fail.sh")
	os.WriteFile(failing, []byte("#!/bin/sh\necho locked >&2; exit 3\n"), 0o700)
	ctx := context.Background()
	if pw, err := PasswordFromFile(ctx, plain); err != nil || string(pw) != "pass word" {
		t.Errorf("file: %q, %v", pw, err)
	}
	if pw, err := PasswordFromFile(ctx, script); err != nil || string(pw) != " from script " {
		t.Errorf("script: %q, %v", pw, err)
	}
	if _, err := PasswordFromFile(ctx, empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty: %v", err)
	}
	if _, err := PasswordFromFile(ctx, failing); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("failing script: %v", err)
	}
	if _, err := PasswordFromFile(ctx, filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}

func FuzzDecrypt(f *testing.F) {
	for _, n := range []string{"testdata/v11", "testdata/v12"} {
		b, _ := os.ReadFile(n)
		f.Add(b)
	}
	f.Add([]byte("$ANSIBLE_VAULT;1.1;AES256\n"))
	k := NewKeyring(Secret{ID: DefaultID, Password: []byte("pw one")})
	f.Fuzz(func(t *testing.T, data []byte) {
		plain, err := k.Decrypt(data)
		if err == nil {
			// Whatever decrypts must seal and open again.
			enc, err := Encrypt(plain, []byte("x"), "")
			if err != nil {
				t.Fatal(err)
			}
			back, err := NewKeyring(Secret{Password: []byte("x")}).Decrypt(enc)
			if err != nil || !bytes.Equal(back, plain) {
				t.Fatalf("round trip: %q, %v", back, err)
			}
		}
	})
}
