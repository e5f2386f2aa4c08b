package planner

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
)

func TestParsePermissions(t *testing.T) {
	src := `name: p
permissions:
  read: [/etc/nginx/**, "~/app/*.conf"]
  write: ["~/app/config.yml", /srv//app/./x/]
  run: [nginx, systemctl, "~/bin/*"]
  network: no
steps:
  - tool: execute_command
    parameters: {command: nginx -t}
`
	p, err := Parse(strings.NewReader(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &safety.Permissions{Source: "p.yaml:2",
		Read:    safety.Globs{Limited: true, List: []string{"/etc/nginx/**", "~/app/*.conf"}},
		Write:   safety.Globs{Limited: true, List: []string{"~/app/config.yml", "/srv/app/x"}},
		Run:     safety.Globs{Limited: true, List: []string{"nginx", "systemctl", "~/bin/*"}},
		Network: safety.NetworkRule{Limited: true}}
	if !reflect.DeepEqual(p.Permissions, want) {
		t.Fatalf("got %+v\nwant %+v", p.Permissions, want)
	}
	out, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "permissions:\n  read:\n") || !strings.Contains(string(out), "network: false") {
		t.Fatalf("marshal:\n%s", out)
	}
	back, err := Parse(bytes.NewReader(out), "p.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(withoutLines(back), withoutLines(p)) {
		t.Fatalf("round trip changed the permissions:\n%s", out)
	}
	// Keys left out allow nothing; yes is yes.
	p, err = Parse(strings.NewReader("permissions: {network: yes}\nsteps: [{tool: x}]\n"), "q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pm := p.Permissions; !pm.Read.Limited || len(pm.Read.List) > 0 || !pm.Run.Limited || !pm.Network.Allowed {
		t.Fatalf("got %+v", pm)
	}
}

// Bad permissions blocks: each error names the file, the line and the
// problem; nothing is accepted half.
func TestParsePermissionsBad(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"permissions:\n  read: [/etc/**]\n  wirte: [/tmp/**]\nsteps: [{tool: x}]\n", "b.yaml:3: unknown key `wirte` in permissions (did you mean `write`?)"},
		{"permissions:\n  read: [etc/hosts]\nsteps: [{tool: x}]\n", "b.yaml:2: permissions: read: \"etc/hosts\": a path must be absolute or start with ~/"},
		{"permissions:\n  write:\n    - /srv/[a\nsteps: [{tool: x}]\n", "b.yaml:3: permissions: write: \"/srv/[a\": bad pattern"},
		{"permissions:\n  write: [/srv/**.log]\nsteps: [{tool: x}]\n", "`**` must be a whole path element"},
		{"permissions:\n  write: [/srv/../etc]\nsteps: [{tool: x}]\n", "`..` is not allowed"},
		{"permissions:\n  write: /srv/**\nsteps: [{tool: x}]\n", "b.yaml:2: permissions: `write` must be a list of strings, not a string"},
		{"permissions:\n  run: [rm -rf]\nsteps: [{tool: x}]\n", "a program name has no spaces"},
		{"permissions:\n  run: [1]\nsteps: [{tool: x}]\n", "entries must be strings, not a number"},
		{"permissions:\n  network: maybe\nsteps: [{tool: x}]\n", "b.yaml:2: permissions: `network` must be yes or no"},
		{"permissions:\nsteps: [{tool: x}]\n", "b.yaml:1: `permissions` is empty"},
		{"permissions: [read]\nsteps: [{tool: x}]\n", "permissions must be a mapping, not a list"},
		{"permissions:\n  read: [\"\"]\nsteps: [{tool: x}]\n", "empty path"},
	} {
		_, err := Parse(strings.NewReader(c.src), "b.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
