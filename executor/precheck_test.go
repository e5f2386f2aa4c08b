package executor

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

func TestCleanStatic(t *testing.T) {
	for in, want := range map[string]string{"~": "~", "~/a/../b": "~/b", "~/..": "./~/..", "~/../etc/x": "./~/../etc/x",
		"/a//b/./c": "/a/b/c", "/a/../../etc": "/etc", "rel/x": "rel/x", "~/.": "~", "~/.ssh/x": "~/.ssh/x", "~/..x": "~/..x"} {
		if got := cleanStatic(in); got != want {
			t.Errorf("cleanStatic(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every step that can be resolved before the run is checked: the errors
// name the file, the step's line and the permission lacked; steps that
// need a variable set by another step, or the host, are left to run time.
func TestCheckPlanPermissions(t *testing.T) {
	src := `permissions:
  read: ["~/app/**", /etc/hostname]
  write: ["~/app/**"]
  run: [cat, cp, systemctl]
  network: no
vars: {dir: "~/app"}
steps:
  - tool: execute_command
    parameters: {command: "cat /etc/hostname > {{dir}}/host"}
  - tool: execute_command
    parameters: {command: "cp ~/app/a /etc/a"}
  - tool: execute_command
    parameters: {command: "curl -o ~/app/x https://example.com/"}
  - tool: read_file
    parameters: {file_path: /etc/shadow}
  - tool: execute_command
    parameters: {command: "cat {{out}}"}
  - tool: write_file
    parameters: {file_path: "~/../root/x", content: x}
  - tool: execute_command
    parameters: {command: "cat rel.txt"}
  - tool: execute_command
    parameters: {command: "python3 -c 'print(1)'"}
  - tool: execute_command
    parameters: {command: "cat /usr/share/x", cwd: "~/app"}
`
	p, err := planner.Parse(strings.NewReader(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := safety.DefaultPolicy()
	err = CheckPlanPermissions(p, tools.Default(pol), pol, map[string]any{"out": "/var/log/x"})
	if err == nil {
		t.Fatal("no error")
	}
	got := err.Error()
	for _, want := range []string{
		"p.yaml:10: step 2 (execute_command): outside the plan's permissions (p.yaml:1): writes /etc/a, which `write:` does not allow",
		"p.yaml:12: step 3 (execute_command): outside the plan's permissions (p.yaml:1): runs curl, which `run:` does not list; connects to other hosts (curl), and `network:` is no",
		"p.yaml:14: step 4 (read_file): outside the plan's permissions (p.yaml:1): reads /etc/shadow, which `read:` does not allow",
		"p.yaml:16: step 5 (execute_command): outside the plan's permissions (p.yaml:1): reads /var/log/x, which `read:` does not allow",
		"p.yaml:22: step 8 (execute_command): outside the plan's permissions (p.yaml:1): what it reads, writes or runs cannot be known before it runs (python3 -c: runs inline code)",
		"p.yaml:24: step 9 (execute_command): outside the plan's permissions (p.yaml:1): reads /usr/share/x",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, not := range []string{"step 1 ", "step 6 ", "step 7 "} {
		if strings.Contains(got, not) {
			t.Errorf("%s refused before the run:\n%s", not, got)
		}
	}
	if p.Permissions = nil; CheckPlanPermissions(p, tools.Default(pol), pol, nil) != nil {
		t.Fatal("a plan without permissions is refused")
	}
}
