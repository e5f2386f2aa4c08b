package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
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
db1 ansible_ssh_host=10.0.0.9 ansible_host=10.0.0.8 ansible_ssh_user=old ansible_user=new ansible_connection=local
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
	if hosts[3].Connection != "local" || hosts[0].Connection != "" {
		t.Errorf("connections = %q, %q; want local for db1, none for web01", hosts[3].Connection, hosts[0].Connection)
	}
	if hosts[0].Vars["role"] != "frontend" {
		t.Errorf("web01 vars = %v, want role=frontend", hosts[0].Vars)
	}

	// --user, --port and --identity fill in only what the inventory
	// leaves unset.
	a.host.user, a.host.port, a.host.identities = "flaguser", 2022, []string{"/keys/flag"}
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
	if k := hosts[2].SSH.IdentityFiles; !reflect.DeepEqual(k, []string{"/keys/web03"}) {
		t.Errorf("web03 with --identity: identity files = %v, want only the inventory's /keys/web03", k)
	}
	if k := hosts[0].SSH.IdentityFiles; len(k) == 0 || k[0] != "/keys/flag" {
		t.Errorf("web01 with --identity: identity files = %v, want /keys/flag first", k)
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
	a := &app{}
	a.host.configFile = filepath.Join(dir, "none")
	writeInvFile(t, a.host.configFile, "")
	hosts, err := a.selectHosts(inv, "")
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
		_, err := a.selectHosts(inv, "")
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), inv+":2: ") || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "hosts.ini:2: ")) {
			t.Errorf("%s: err = %v, want a usageError %s…", tt.line, err, tt.want)
		}
	}
}

// selectHosts is engine.SelectHosts with the flags of a, its ConfigError
// the CLI's usageError (exit 2).
func (a *app) selectHosts(file, limit string) ([]engine.Target, error) {
	hosts, err := engine.SelectHosts(file, limit, a.host.overrides())
	var ce engine.ConfigError
	if errors.As(err, &ce) {
		return nil, usageError{ce.Err}
	}
	return hosts, err
}
