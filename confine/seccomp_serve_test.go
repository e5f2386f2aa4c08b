//go:build linux && (amd64 || arm64)

package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeFiltersItsShells: the served worker's confined commands run
// under their level's seccomp filter, the shells it starts ahead for them
// included, while its unconfined ones — and every thread of the worker
// itself — carry none: a thread that installed a filter never runs
// anything else (it ends with the command's start).
func TestServeFiltersItsShells(t *testing.T) {
	needLandlock(t)
	if !Seccomp() {
		t.Skip("the kernel takes no seccomp filter")
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "safe.rules")
	if err := WriteRuleset(rules, Compile(Spec{Devices: []string{"/dev/null"}, Syscalls: SyscallsRead})); err != nil {
		t.Fatal(err)
	}
	confined := []string{os.Args[0], LaunchArg, RulesFlag, rules, "--"}
	s := serve(t)
	// The shell's seccomp mode and filters, then each of the worker's
	// threads' (its parent's).
	const probe = `sed -n 's/^Seccomp[^:]*:[[:space:]]*//p' /proc/$$/status | tr '\n' ' '; echo; ` +
		`cat /proc/$PPID/task/*/status | sed -n 's/^Seccomp:[[:space:]]*//p' | sort -u | tr '\n' ' '`
	for i, tc := range []struct {
		wrap []string
		want string // the shell's "MODE FILTERS"
	}{
		{confined, "2 1"}, {confined, "2 1"}, // the second started ahead
		{nil, "0 0"}, {nil, "0 0"},
		{confined, "2 1"}, {confined, "2 1"},
	} {
		out, errs, status, _ := s.run(probe, dir, tc.wrap...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if status != 0 || len(lines) != 2 {
			t.Fatalf("command %d: status %d: %q %q", i, status, out, errs)
		}
		if got := strings.TrimSpace(lines[0]); got != tc.want {
			t.Errorf("command %d: the shell's seccomp %q, want %q", i, got, tc.want)
		}
		if got := strings.TrimSpace(lines[1]); got != "0" {
			t.Errorf("command %d: the worker's threads' seccomp modes %q, want 0 only", i, got)
		}
	}
}
