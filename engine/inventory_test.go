package engine

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSelectHostsSSHSettings checks the precedence SelectHosts gives: the
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
db1 ansible_ssh_host=10.0.0.9 ansible_host=10.0.0.8 ansible_ssh_user=old ansible_user=new ansible_connection=local
[web:vars]
role=frontend
`)
	o := SSHOverrides{ConfigFile: sshConfig}
	hosts, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "", o)
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
	if hosts[3].Connection != "local" || hosts[0].Connection != "" {
		t.Errorf("connections = %q, %q; want local for db1, none for web01", hosts[3].Connection, hosts[0].Connection)
	}
	if hosts[0].Vars["role"] != "frontend" {
		t.Errorf("web01 vars = %v, want role=frontend", hosts[0].Vars)
	}

	// --user, --port and --identity fill in only what the inventory
	// leaves unset.
	o.User, o.Port, o.Identities = "flaguser", 2022, []string{"/keys/flag"}
	hosts, err = SelectHosts(InventorySpec{Sources: []string{inv}}, "web", o)
	if err != nil {
		t.Fatal(err)
	}
	if h := hosts[0].SSH; h.User != "flaguser" || h.Port != 2022 {
		t.Errorf("web01 with --user/--port = %s:%d, want flaguser:2022", h.User, h.Port)
	}
	if h := hosts[2].SSH; h.User != "deploy" || h.Port != 2203 {
		t.Errorf("web03 with --user/--port = %s:%d, want deploy:2203", h.User, h.Port)
	}
	if k := hosts[2].SSH.IdentityFiles; !reflect.DeepEqual(k, []string{"/keys/web03"}) {
		t.Errorf("web03 with --identity: identity files = %v, want only the inventory's /keys/web03", k)
	}
	if k := hosts[0].SSH.IdentityFiles; len(k) == 0 || k[0] != "/keys/flag" {
		t.Errorf("web01 with --identity: identity files = %v, want /keys/flag first", k)
	}

	// A limit that selects nothing, and a bad inventory, are usage errors.
	if _, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "nosuch", o); !errors.As(err, new(ConfigError)) {
		t.Errorf("limit matching nothing: err = %v, want a ConfigError", err)
	}
	bad := filepath.Join(dir, "bad.ini")
	writeInvFile(t, bad, "[web\nhost1\n")
	_, err = SelectHosts(InventorySpec{Sources: []string{bad}}, "", o)
	if !errors.As(err, new(ConfigError)) || !strings.Contains(err.Error(), bad+":1:") {
		t.Errorf("unclosed section: err = %v, want a ConfigError naming %s:1", err, bad)
	}
}

// TestSelectHostsTemplatedConnection checks that connection variables
// holding {{ name }} references are rendered over the host's variables,
// inventory_hostname and group_names, as Ansible does, and that anything
// else Jinja can do is an error naming the host and variable, never a
// literal "{{" to connect to.
func TestSelectHostsTemplatedConnection(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.ini")
	writeInvFile(t, inv, `
[web]
t1 ansible_host="{{ inventory_hostname }}.example.com" ansible_user="{{ deploy_user }}" deploy_user=ops
t2 ansible_host="{{inventory_hostname}}.internal" ansible_ssh_private_key_file="{{ keydir }}/id_t2"
[web:vars]
ansible_port="{{ web_port }}"
web_port=2222
keydir="{{ home }}/.ssh"
home=/h
`)
	o := SSHOverrides{ConfigFile: filepath.Join(dir, "none")}
	writeInvFile(t, o.ConfigFile, "")
	hosts, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "", o)
	if err != nil {
		t.Fatal(err)
	}
	if h := hosts[0].SSH; h.HostName != "t1.example.com" || h.User != "ops" || h.Port != 2222 {
		t.Errorf("t1 = %s@%s:%d, want ops@t1.example.com:2222", h.User, h.HostName, h.Port)
	}
	if h := hosts[1].SSH; h.HostName != "t2.internal" || !reflect.DeepEqual(h.IdentityFiles, []string{"/h/.ssh/id_t2"}) {
		t.Errorf("t2 = %s with keys %v, want t2.internal with /h/.ssh/id_t2", h.HostName, h.IdentityFiles)
	}
	// The listing's vars stay as written, as ansible-inventory prints them.
	if v := hosts[0].Vars["ansible_host"]; v != "{{ inventory_hostname }}.example.com" {
		t.Errorf("t1 vars ansible_host = %v, want the template as written", v)
	}

	for _, tt := range []struct{ line, want string }{
		{`b1 ansible_host="{{ inventory_hostname | upper }}"`, `hosts.ini:2: inventory host b1: ansible_host "{{ inventory_hostname | upper }}": `},
		{`b1 ansible_user="{{ nosuch }}"`, `hosts.ini:2: inventory host b1: ansible_user "{{ nosuch }}": `},
		{`b1 ansible_host="{% if x %}a{% endif %}"`, `hosts.ini:2: inventory host b1: ansible_host "{% if x %}a{% endif %}": only {{ variable }} references`},
		{`b1 ansible_host="{{ x }}" x="{{ x }}"`, `hosts.ini:2: inventory host b1: ansible_host "{{ x }}": only plain {{ variable }} references`},
		{`b1 ansible_port="{{ p }}" p=abc`, `hosts.ini:2: inventory host b1: bad ansible_port "abc"`},
		{`b1 ansible_ssh_private_key_file="{{ 'k' ~ x }}"`, `hosts.ini:2: inventory host b1: ansible_ssh_private_key_file "{{ 'k' ~ x }}": only plain`},
	} {
		writeInvFile(t, inv, "[web]\n"+tt.line+"\n")
		_, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "", o)
		if !errors.As(err, new(ConfigError)) || !strings.Contains(err.Error(), inv+":2: ") || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "hosts.ini:2: ")) {
			t.Errorf("%s: err = %v, want a ConfigError %s…", tt.line, err, tt.want)
		}
	}
}

func writeInvFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
