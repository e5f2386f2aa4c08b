package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelectHostsSSHSettings checks the precedence selectHosts gives: the
// inventory's connection variables over the ssh_config file (matched on
// ansible_host when set, as ssh is run with it), and --user/--port only
// where the inventory says nothing.
func TestSelectHostsSSHSettings(t *testing.T) {
	dir := t.TempDir()
	sshConfig := filepath.Join(dir, "ssh_config")
	writeInvFile(t, sshConfig, `
Host web01
  HostName 192.0.2.1
  User fromconfig
  Port 2201
Host 10.9.9.9
  User viaaddr
  Port 2299
Host *
  User defaultuser
`)
	inv := filepath.Join(dir, "hosts.ini")
	writeInvFile(t, inv, `
[web]
web01
web02 ansible_host=10.9.9.9
web03 ansible_host=10.0.0.3 ansible_port=2203 ansible_user=deploy ansible_ssh_private_key_file=/keys/web03
[db]
db1 ansible_ssh_host=10.0.0.9 ansible_host=10.0.0.8 ansible_ssh_user=old ansible_user=new
[web:vars]
role=frontend
`)
	a := &app{}
	a.host.configFile = sshConfig
	hosts, err := a.selectHosts(inv, "")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name, host, user string
		port             int
		groups           string
	}
	wants := []want{
		{"web01", "192.0.2.1", "fromconfig", 2201, "web"},
		{"web02", "10.9.9.9", "viaaddr", 2299, "web"},
		{"web03", "10.0.0.3", "deploy", 2203, "web"},
		{"db1", "10.0.0.9", "old", 22, "db"},
	}
	if len(hosts) != len(wants) {
		t.Fatalf("got %d hosts, want %d", len(hosts), len(wants))
	}
	for i, w := range wants {
		h := hosts[i]
		got := want{h.Name, h.SSH.HostName, h.SSH.User, h.SSH.Port, strings.Join(h.Groups, ",")}
		if got != w {
			t.Errorf("host %d = %+v, want %+v", i, got, w)
		}
	}
	if k := hosts[2].SSH.IdentityFiles; len(k) == 0 || k[0] != "/keys/web03" {
		t.Errorf("web03 identity files = %v, want /keys/web03 first", k)
	}
	if hosts[0].Vars["role"] != "frontend" {
		t.Errorf("web01 vars = %v, want role=frontend", hosts[0].Vars)
	}

	// --user and --port fill in only what the inventory leaves unset.
	a.host.user, a.host.port = "flaguser", 2022
	hosts, err = a.selectHosts(inv, "web")
	if err != nil {
		t.Fatal(err)
	}
	if h := hosts[0].SSH; h.User != "flaguser" || h.Port != 2022 {
		t.Errorf("web01 with --user/--port = %s:%d, want flaguser:2022", h.User, h.Port)
	}
	if h := hosts[2].SSH; h.User != "deploy" || h.Port != 2203 {
		t.Errorf("web03 with --user/--port = %s:%d, want deploy:2203", h.User, h.Port)
	}

	// A limit that selects nothing, and a bad inventory, are usage errors.
	if _, err := a.selectHosts(inv, "nosuch"); !errors.As(err, new(usageError)) {
		t.Errorf("limit matching nothing: err = %v, want a usageError", err)
	}
	bad := filepath.Join(dir, "bad.ini")
	writeInvFile(t, bad, "[web\nhost1\n")
	_, err = a.selectHosts(bad, "")
	if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), bad+":1:") {
		t.Errorf("unclosed section: err = %v, want a usageError naming %s:1", err, bad)
	}
}

func writeInvFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
