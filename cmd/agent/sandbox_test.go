package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
)

// TestSandboxFlags: agent run --sandbox --allow-write confines every
// command, approved ones too (--approve all): a write outside the allowed
// paths is blocked and says so, a write inside succeeds; --allow-write
// without --sandbox and an unknown mode are usage errors (exit 2).
func TestSandboxFlags(t *testing.T) {
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
	base := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	work, tmp, outside := filepath.Join(base, "work"), filepath.Join(base, "tmp"), filepath.Join(base, "outside")
	allowed := filepath.Join(work, "allowed")
	for _, d := range []string{work, tmp, allowed, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	t.Chdir(work)
	plan := filepath.Join(base, "plan.yaml")
	if err := os.WriteFile(plan, []byte("steps:\n  - tool: execute_command\n    parameters: {command: 'echo x > "+allowed+"/ok'}\n"+
		"  - tool: execute_command\n    parameters: {command: 'echo x > "+outside+"/no'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAgent("run", plan, "--approve", "all", "--sandbox", "--json")
	if code != 1 || !strings.Contains(out, "blocked by the sandbox: write to "+outside+"/no") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(allowed, "ok")); err != nil {
		t.Error("the allowed write did not happen")
	}
	if _, err := os.Stat(filepath.Join(outside, "no")); err == nil {
		t.Error("the write outside happened")
	}
	for _, args := range [][]string{{"run", plan, "--sandbox=bogus"}, {"--allow-net", "-c", "x"}} {
		if _, errOut, code := runAgent(args...); code != 2 {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
}
