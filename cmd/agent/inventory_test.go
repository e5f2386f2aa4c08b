package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func writeInvFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInventoryListAgreesWithAnsible runs `agent inventory list --json`
// and `ansible-inventory --list` on the inventory package's comparison
// inventories and checks that they agree on the hosts, each host's groups
// (directly or through children, without all) and its variables, the
// connection variables included. It is skipped without ansible-inventory
// and fails when CI=true and it is missing.
func TestInventoryListAgreesWithAnsible(t *testing.T) {
	bin, err := exec.LookPath("ansible-inventory")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ansible-inventory is missing and CI=true: install Debian's ansible package")
		}
		t.Skip("ansible-inventory is missing (install Debian's ansible package)")
	}
	files, err := filepath.Glob("../../inventory/testdata/compare/*")
	if err != nil || len(files) < 8 {
		t.Fatalf("want the inventory package's comparison inventories, got %d", len(files))
	}
	files = append(files, "../../inventory/testdata/vardirs/hosts.ini")
	home := t.TempDir()
	sshConfig := filepath.Join(home, "ssh_config")
	writeInvFile(t, sshConfig, "")
	for _, file := range files {
		cmd := exec.Command(bin, "-i", file, "--list")
		cmd.Env = append(os.Environ(), "HOME="+home, "ANSIBLE_CONFIG="+filepath.Join(home, "none.cfg"),
			"ANSIBLE_INVENTORY_UNPARSED_FAILED=true", "ANSIBLE_LOCAL_TEMP="+filepath.Join(home, "tmp"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: ansible-inventory: %v", file, err)
		}
		want := ansibleListing(t, out)

		var stdout, stderr bytes.Buffer
		if code := Main([]string{"-F", sshConfig, "inventory", "list", "-i", file, "--json"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: agent inventory list exit %d: %s", file, code, stderr.String())
		}
		var got []inventoryEntry
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("%s: agent's JSON: %v", file, err)
		}
		if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].Name < got[j].Name }) {
			t.Errorf("%s: the listing is not sorted by name", file)
		}
		var gotNames []string
		for _, e := range got {
			gotNames = append(gotNames, e.Name)
			w, ok := want[e.Name]
			if !ok {
				continue
			}
			if !reflect.DeepEqual(e.Groups, w.groups) {
				t.Errorf("%s: %s groups = %v, Ansible %v", file, e.Name, e.Groups, w.groups)
			}
			// Compare through JSON, as both sides print it.
			var gv map[string]any
			b, _ := json.Marshal(e.Vars)
			_ = json.Unmarshal(b, &gv)
			if !reflect.DeepEqual(gv, w.vars) {
				t.Errorf("%s: %s vars = %s, Ansible %v", file, e.Name, b, w.vars)
			}
			if h, ok := w.vars["ansible_host"].(string); ok && e.Host != h && w.vars["ansible_ssh_host"] == nil {
				t.Errorf("%s: %s host = %s, want ansible_host %s", file, e.Name, e.Host, h)
			}
			if p, ok := w.vars["ansible_port"].(float64); ok && e.Port != int(p) && w.vars["ansible_ssh_port"] == nil {
				t.Errorf("%s: %s port = %d, want ansible_port %v", file, e.Name, e.Port, p)
			}
			if u, ok := w.vars["ansible_user"].(string); ok && e.User != u && w.vars["ansible_ssh_user"] == nil {
				t.Errorf("%s: %s user = %s, want ansible_user %s", file, e.Name, e.User, u)
			}
		}
		var wantNames []string
		for n := range want {
			wantNames = append(wantNames, n)
		}
		sort.Strings(wantNames)
		if !reflect.DeepEqual(gotNames, wantNames) {
			t.Errorf("%s: hosts\n got %v\nwant %v", file, gotNames, wantNames)
		}
	}
}

type ansibleHost struct {
	groups []string
	vars   map[string]any
}

// ansibleListing reads `ansible-inventory --list`: every host with the
// groups that reach it through hosts and children (without all), and its
// vars (!unsafe values unwrapped).
func ansibleListing(t *testing.T, out []byte) map[string]ansibleHost {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("ansible-inventory output: %v", err)
	}
	type group struct{ Hosts, Children []string }
	groups := map[string]group{}
	var meta struct {
		Hostvars map[string]map[string]any `json:"hostvars"`
	}
	for name, msg := range raw {
		if name == "_meta" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var g group
		if err := json.Unmarshal(msg, &g); err != nil {
			t.Fatal(err)
		}
		groups[name] = g
	}
	res := map[string]ansibleHost{}
	var walk func(name string, path []string)
	walk = func(name string, path []string) {
		g := groups[name]
		if name != "all" {
			path = append(path, name)
		}
		for _, h := range g.Hosts {
			e := res[h]
			e.groups = append(e.groups, path...)
			res[h] = e
		}
		for _, c := range g.Children {
			walk(c, append([]string(nil), path...))
		}
	}
	walk("all", nil)
	for h, e := range res {
		set := map[string]bool{}
		var gs []string
		for _, g := range e.groups {
			if !set[g] {
				set[g] = true
				gs = append(gs, g)
			}
		}
		sort.Strings(gs)
		e.groups = gs
		e.vars = meta.Hostvars[h]
		if e.vars == nil {
			e.vars = map[string]any{}
		}
		for k, v := range e.vars {
			if m, ok := v.(map[string]any); ok && len(m) == 1 && m["__ansible_unsafe"] != nil {
				e.vars[k] = m["__ansible_unsafe"]
			}
		}
		res[h] = e
	}
	return res
}

// TestInventorySourcesCLI: -i more than once (a directory, a script, a
// vaulted file), the vault flags, decrypted values hidden from the
// listing, the warnings for unused ansible_* variables, --limit @FILE,
// and malformed patterns exiting 2 naming them.
func TestInventorySourcesCLI(t *testing.T) {
	home := t.TempDir()
	sshConfig := filepath.Join(home, "ssh_config")
	writeInvFile(t, sshConfig, "")
	retry := filepath.Join(home, "site.retry")
	writeInvFile(t, retry, "db1\nextra1\n")
	const inv = "../../inventory/testdata/"
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"-F", sshConfig}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run("inventory", "list", "-i", inv+"vault/hosts.yml", "-i", inv+"vault/enc_hosts",
		"--vault-id", "prod@"+inv+"vault/pw_prod", "--vault-password-file", inv+"vault/pw", "--limit", "@"+retry, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []inventoryEntry
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "db1" || got[1].Name != "extra1" {
		t.Fatalf("hosts %+v, want db1 and extra1", got)
	}
	for _, secret := range []string{"s3cr3t-db-password", "tok-prod-9f8e7d", "all-hosts-backup-key", "from_encrypted_ini"} {
		if strings.Contains(out, secret) {
			t.Errorf("the listing shows the vaulted value %q", secret)
		}
	}
	if got[0].Vars["db_password"] != "[vaulted]" || got[1].Host != "192.0.2.7" {
		t.Errorf("db1 vars %v, extra1 host %q", got[0].Vars, got[1].Host)
	}
	code, _, errOut = run("inventory", "list", "-i", inv+"vault/hosts.yml")
	if code != 2 || !strings.Contains(errOut, "--vault-password-file") {
		t.Errorf("without a password: exit %d, %s", code, errOut)
	}
	code, _, errOut = run("inventory", "list", "-i", inv+"vault/enc_hosts", "--vault-password-file", inv+"vault/pw_prod")
	if code != 2 || !strings.Contains(errOut, "wrong password") {
		t.Errorf("wrong password: exit %d, %s", code, errOut)
	}
	dir := t.TempDir()
	writeInvFile(t, filepath.Join(dir, "hosts"), "[web]\nweb1 ansible_python_interpreter=/usr/bin/python3\nweb2\n")
	code, out, errOut = run("inventory", "list", "-i", dir, "-i", inv+"sources/scripts/nometa.sh")
	if code != 0 || !strings.Contains(out, "app1") || !strings.Contains(out, "web2") ||
		!strings.Contains(errOut, "warning: inventory variable ansible_python_interpreter: agent does not act on it (host web1)") {
		t.Errorf("two sources: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, p := range []string{"~[", "web[", "web[1"} {
		code, _, errOut = run("inventory", "list", "-i", dir, "--limit", p)
		if code != 2 || !strings.Contains(errOut, "malformed host pattern") || !strings.Contains(errOut, p) {
			t.Errorf("--limit %q: exit %d, %s", p, code, errOut)
		}
	}
}
