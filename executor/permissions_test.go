package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// permsPlan parses a plan file written in dir.
func permsPlan(t *testing.T, dir, text string) *planner.Plan {
	t.Helper()
	p, err := planner.Parse(strings.NewReader(text), filepath.Join(dir, "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A step outside the plan's permissions is denied at run time whatever
// the approval mode, with the permission it lacks; steps inside run.
func TestPermissionsDenyAtRunTime(t *testing.T) {
	h := newHarness(t)
	ok := filepath.Join(h.dir, "ok.txt")
	other := t.TempDir()
	bad := filepath.Join(other, "bad.txt")
	link := filepath.Join(h.dir, "link")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	head := "permissions:\n  read: [" + h.dir + "/**]\n  write: [" + h.dir + "/**]\n  run: [echo, cat, cp, rm]\n  network: no\nsteps:\n"
	cases := []struct {
		name, step, want string
		denied           bool
		file             string // must not exist after a denied step
	}{
		{"inside", "- tool: execute_command\n  parameters: {command: 'echo hi > " + ok + "'}\n", "", false, ""},
		{"write outside", "- tool: execute_command\n  parameters: {command: 'echo hi > " + bad + "'}\n", "writes " + bad + ", which `write:` does not allow", true, bad},
		{"through a link", "- tool: execute_command\n  parameters: {command: 'echo hi > " + link + "/bad.txt'}\n", "writes " + bad, true, bad},
		{"dotdot", "- tool: execute_command\n  parameters: {command: 'echo hi > " + h.dir + "/../" + filepath.Base(other) + "/bad.txt'}\n", "does not allow", true, bad},
		{"program", "- tool: execute_command\n  parameters: {command: 'touch " + ok + "'}\n", "runs touch, which `run:` does not list", true, ""},
		{"network", "- tool: execute_command\n  parameters: {command: 'curl -s http://127.0.0.1:9/'}\n", "curl", true, ""},
		{"opaque", "- tool: execute_command\n  parameters: {command: 'cat $HOSTNAME'}\n", "cannot be known before it runs", true, ""},
		{"file tool", "- tool: write_file\n  parameters: {file_path: " + bad + ", content: x}\n", "writes " + bad, true, bad},
		{"file tool through link", "- tool: write_file\n  parameters: {file_path: " + link + "/bad.txt, content: x}\n", "writes " + bad, true, bad},
		{"read_file", "- tool: read_file\n  parameters: {file_path: /etc/hostname}\n", "reads /etc/hostname, which `read:` does not allow", true, ""},
		{"recursive rm of a dir outside", "- tool: execute_command\n  parameters: {command: 'rm -rf " + other + "'}\n", "everything under " + other, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := h.executor(safety.ModeAll, false, nil)
			sum, err := e.RunPlan(context.Background(), permsPlan(t, h.dir, head+c.step))
			if err != nil {
				t.Fatal(err)
			}
			if !c.denied {
				if !sum.Success {
					t.Fatalf("want success, got %s", sum.Text())
				}
				return
			}
			if sum.Failed == nil || sum.Failed.Status != execctx.StatusDenied {
				t.Fatalf("want denied, got %s", sum.Text())
			}
			if !strings.Contains(sum.Failed.Observation, c.want) || !strings.Contains(sum.Failed.Observation, "plan.yaml:1") {
				t.Fatalf("observation %q lacks %q and the permissions' place", sum.Failed.Observation, c.want)
			}
			if c.file != "" {
				if _, err := os.Stat(c.file); err == nil {
					t.Fatalf("%s was written by a denied step", c.file)
				}
			}
			if _, err := os.Stat(other); err != nil {
				t.Fatalf("a denied step removed %s", other)
			}
		})
	}
}

// Config.Permissions (--allow-write) limit writes only.
func TestAllowWriteConfig(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeAll, false, nil)
	e.perms = append(e.perms, &safety.Permissions{Write: safety.Globs{Limited: true, List: []string{h.dir + "/**"}}, Source: "--allow-write"})
	other := filepath.Join(t.TempDir(), "x")
	plan := permsPlan(t, h.dir, "steps:\n- tool: execute_command\n  parameters: {command: 'cat /etc/hostname > "+h.dir+"/a'}\n"+
		"- tool: execute_command\n  parameters: {command: 'echo x > "+other+"'}\n")
	sum, err := e.RunPlan(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 1 || sum.Failed == nil || !strings.Contains(sum.Failed.Observation, "--allow-write") {
		t.Fatalf("want the first step run and the second denied naming --allow-write: %s", sum.Text())
	}
}
