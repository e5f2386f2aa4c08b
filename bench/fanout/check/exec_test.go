package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func execHost(host, output string) string {
	return agentStep(host, 1, "ok", output) + `{"event":"done","host":"` + host + `","status":"success"}` + "\n"
}

// TestExec: agent exec -i's one step per host against parallel-ssh's
// output: equal passes; a missing host, other bytes, a failed step, an
// empty output or a missing parallel-ssh file fails.
func TestExec(t *testing.T) {
	dir := t.TempDir()
	hosts := hostsFile(t, dir, "h1", "h2")
	out := filepath.Join(dir, "o")
	write(t, out, "h1", "6.1\nme\n")
	write(t, out, "h2", "6.1\nme\n")
	good := write(t, dir, "good", execHost("h1", "6.1\nme\n")+execHost("h2", "6.1\nme"))
	if err := run([]string{"exec", "-hosts", hosts, good, out}); err != nil {
		t.Fatalf("equal outputs: %v", err)
	}
	for name, agent := range map[string]string{
		"missing host": execHost("h1", "6.1\nme\n"),
		"other bytes":  execHost("h1", "6.1\nme\n") + execHost("h2", "6.1\nyou\n"),
		"failed step":  execHost("h1", "6.1\nme\n") + strings.Replace(execHost("h2", "6.1\nme\n"), `"status":"ok"`, `"status":"error"`, 1),
		"not done":     execHost("h1", "6.1\nme\n") + strings.Replace(execHost("h2", "6.1\nme\n"), "success", "failed", 1),
		"two steps":    execHost("h1", "6.1\nme\n") + agentStep("h2", 2, "ok", "x") + execHost("h2", "6.1\nme\n"),
	} {
		if err := run([]string{"exec", "-hosts", hosts, write(t, dir, "bad", agent), out}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	write(t, out, "h2", "")
	empty := write(t, dir, "empty", execHost("h1", "6.1\nme\n")+execHost("h2", ""))
	if err := run([]string{"exec", "-hosts", hosts, empty, out}); err == nil {
		t.Error("empty outputs: no error")
	}
	if err := run([]string{"exec", "-hosts", hosts, good}); err == nil {
		t.Error("one argument: no error")
	}
}
