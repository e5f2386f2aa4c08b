package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchSavePlanInventoryVars: --plan-once --save-plan with steps that
// use inventory variables ({{inventory_hostname}}, {{dir}}) saves a plan
// that `agent run -i` replays on the hosts.
func TestBatchSavePlanInventoryVars(t *testing.T) {
	f := newBatchFixture(t)
	srv := startBatchLLM(t, fixScript()...)
	names := []string{"web01", "web02"}
	f.writeScripts(names)
	inv := f.inventory("")
	saved := filepath.Join(t.TempDir(), "fix.yaml")
	out, errOut, code := f.agent("-i", inv, "--limit", strings.Join(names, ":"), "--plan-once", "--save-plan", saved,
		"--approve", f.approve, "-c", fixTask)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(saved)
	if err != nil {
		t.Fatalf("plan not saved: %v\nstderr:\n%s", err, errOut)
	}
	if !strings.Contains(string(b), "{{inventory_hostname}}") {
		t.Errorf("saved plan:\n%s", b)
	}
	// The steps need one host's paths: no permissions block (it would
	// refuse the others), and a note says why.
	if strings.Contains(string(b), "permissions:") || !strings.Contains(errOut, "no permissions: block written: step") {
		t.Errorf("saved plan:\n%s\nstderr:\n%s", b, errOut)
	}
	f.writeScripts([]string{"web03"})
	out, errOut, code = f.agent("run", saved, "-i", inv, "--limit", "web03", "--approve", f.approve)
	if code != 0 {
		t.Fatalf("replay: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	f.checkScripts([]string{"web01", "web02", "web03"})

	// A plan that cannot be written fails the run, after the hosts.
	srv.Push(fixScript()...)
	f.writeScripts(names)
	bad := filepath.Join(t.TempDir(), "no-such-dir", "fix.yaml")
	out, errOut, code = f.agent("-i", inv, "--limit", strings.Join(names, ":"), "--plan-once", "--save-plan", bad,
		"--approve", f.approve, "-c", fixTask)
	if code != 1 || !strings.Contains(errOut, "--save-plan") || !strings.Contains(out, "2 ok") {
		t.Fatalf("unwritable --save-plan: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
