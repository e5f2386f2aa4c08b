package main

import (
	"strings"
	"testing"
)

// An unknown flag says the mistake and where the flags are, in two lines,
// not the whole usage before it; every sub-command's --help lists its
// flags (issue 29, first touch).
func TestFirstTouchFlagsAndHelp(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		help string
	}{
		{[]string{"--bogus"}, "`agent --help`"},
		{[]string{"run", "plan.yaml", "--bogus"}, "`agent run --help`"},
		{[]string{"inventory", "list", "--bogus"}, "`agent inventory list --help`"},
		{[]string{"undo", "--bogus"}, "`agent undo --help`"},
		{[]string{"sessions", "--bogus"}, "`agent sessions --help`"},
	} {
		out, errOut, code := runAgent(c.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.Contains(lines[0], "unknown flag: --bogus") || !strings.Contains(lines[1], c.help) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and two lines: the error, then %s", c.args, code, out, errOut, exitUsage, c.help)
		}
	}
	if _, errOut, code := runAgent("--var", "k=v", "run", "p.yaml"); code != exitUsage || !strings.Contains(errOut, "--var belongs to run") || strings.Count(errOut, "\n") > 1 {
		t.Errorf("--var before run: exit %d, stderr %q", code, errOut)
	}
	for _, c := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"inventory", "--help"}, []string{"--limit", "--json", "--inventory"}},
		{[]string{"inventory", "list", "--help"}, []string{"--limit", "--json"}},
		{[]string{"exec", "--help"}, []string{"--ssh-host", "--become", "--port"}},
		{[]string{"run", "--help"}, []string{"--approve", "--var"}},
		{[]string{"undo", "--help"}, []string{"--ssh-host"}},
		{[]string{"mcp", "--help"}, []string{"--approve"}},
		{[]string{"resume", "--help"}, []string{"--"}},
		{[]string{"sessions", "--help"}, []string{"--json"}},
		{[]string{"ssh-config", "--help"}, []string{"--"}},
		{[]string{"audit", "--help"}, []string{"--host"}},
		{[]string{"report", "--help"}, []string{"--json"}},
	} {
		out, errOut, code := runAgent(c.args...)
		for _, f := range c.flags {
			if code != 0 || !strings.Contains(out, "  "+f) && !strings.Contains(out, ", "+f) {
				t.Errorf("%q: exit %d, no flag %s listed:\n%s%s", c.args, code, f, out, errOut)
			}
		}
	}
}
