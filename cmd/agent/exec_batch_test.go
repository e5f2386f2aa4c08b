package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agent exec -i INV --limit PAT --forks N -- CMD: the command on every
// selected host as a one-step plan, through the safety check: a safe
// command runs everywhere (templated per host), a change is refused
// without approval (exit 4) and runs with it, and undo takes it back.
func TestExecOverInventory(t *testing.T) {
	f := newBatchFixture(t)
	inv := f.inventory("")
	out, errOut, code := f.agent("exec", "-i", inv, "--limit", "web01:web02:db01", "--forks", "2", "--json", "--", "echo", "hi from {{inventory_hostname}}")
	if code != 0 {
		t.Fatalf("a safe command: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, h := range []string{"web01", "web02", "db01"} {
		if !strings.Contains(out, `"output":"hi from `+h+`\n"`) {
			t.Errorf("no output from %s:\n%s", h, out)
		}
	}
	if strings.Contains(out, "web03") {
		t.Errorf("web03 ran outside --limit:\n%s", out)
	}
	file := filepath.Join(f.dir, "{{inventory_hostname}}.txt")
	out, errOut, code = f.agent("exec", "-i", inv, "--limit", "web01", "--", "echo x > "+file)
	if code != exitSomeHosts || !strings.Contains(out, "denied by safety policy") {
		t.Fatalf("a change without approval: exit %d, want %d (denied)\n%s\n%s", code, exitSomeHosts, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "web01.txt")); !os.IsNotExist(err) {
		t.Fatalf("written although denied: %v", err)
	}
	out, errOut, code = f.agent("-i", inv, "--limit", "web01", "exec", "--approve", f.approve, "--", "echo x > "+file)
	if code != 0 {
		t.Fatalf("a change approved: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "web01.txt")); string(b) != "x\n" {
		t.Errorf("web01.txt: %q", b)
	}
	// A flag after exec without an inventory is still refused, never run.
	if _, errOut, code := f.agent("exec", "--approve", "all", "--", "true"); code != exitUsage || !strings.Contains(errOut, "unknown flag") {
		t.Errorf("exec --approve without -i: exit %d\n%s", code, errOut)
	}
}
