package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestExamplesOnBusyBox runs every plan in examples/ on a Dropbear +
// BusyBox host (POSIX ash, no bash, BusyBox's applets) at --approve
// medium, confined by the launcher sent there, after examples/setup.sh
// made their files: each succeeds and does what its README row says;
// then agent undo puts back every file the plan changed. On this machine
// (Debian's /bin/sh is dash, which runs local steps) TestExamplesOnDash
// does the same.
func TestExamplesOnBusyBox(t *testing.T) {
	plans, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(plans) < 4 {
		t.Fatalf("examples: %q, %v", plans, err)
	}
	setup, err := os.ReadFile("../../examples/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDropbear(t, testenv.DropbearOptions{SFTP: true})
	t.Setenv("CI", "true")
	agent := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"-F", d.SSHConfig, "--ssh-host", d.Alias}, args...), strings.NewReader(""), &out, &errOut)
		return out.String() + errOut.String(), code
	}
	runExamples(t, plans, string(setup), agent, d.Alias, d.Path(d.Home))
}

// TestExamplesOnDash runs every example on this machine, whose /bin/sh
// (Debian's dash) runs local steps, in a scratch home.
func TestExamplesOnDash(t *testing.T) {
	if sh, _ := filepath.EvalSymlinks("/bin/sh"); filepath.Base(sh) != "dash" {
		t.Skipf("/bin/sh is %s, not dash", sh)
	}
	dir, _ := filepath.Abs("../../examples")
	plans, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	setup, err := os.ReadFile(filepath.Join(dir, "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(home, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("CI", "true")
	t.Chdir(home)
	agent := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errOut)
		return out.String() + errOut.String(), code
	}
	runExamples(t, plans, string(setup), agent, "local", home)
}

// runExamples runs each plan through agent on a host whose home is home
// on this machine (alias: the host's name in agent's output).
func runExamples(t *testing.T, plans []string, setup string, agent func(args ...string) (string, int), alias, homeDir string) {
	t.Helper()
	home := func(p string) string { return filepath.Join(homeDir, p) }
	for _, plan := range plans {
		name := strings.TrimSuffix(filepath.Base(plan), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			if out, code := agent("exec", "--", setup); code != 0 {
				t.Fatalf("setup.sh on the host: exit %d\n%s", code, out)
			}
			before := treeOf(t, homeDir)
			out, code := agent("run", plan, "--approve", "medium", "--require-enforcement")
			if code != 0 || !strings.Contains(out, "success on "+alias) {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			read := func(p string) string { b, _ := os.ReadFile(home(p)); return string(b) }
			switch name {
			case "fix-script", "demo-saved":
				if got := read("test/a.sh"); got != "#!/bin/sh\necho 2\n" {
					t.Errorf("~/test/a.sh after the run: %q\n%s", got, out)
				}
			case "log-errors":
				if got := read("errors.txt"); strings.Count(got, "ERROR") != 2 || strings.Contains(got, "INFO") {
					t.Errorf("~/errors.txt: %q\n%s", got, out)
				}
			case "flip-flag":
				if got := read("app/config.yaml"); !strings.Contains(got, "debug: true") {
					t.Errorf("~/app/config.yaml: %q\n%s", got, out)
				}
				if read("app/restarted") == "" {
					t.Errorf("the restart command did not run:\n%s", out)
				}
				// What the restart script wrote is its own, not the plan's:
				// the summary names the command as not journaled.
				os.Remove(home("app/restarted"))
			default:
				t.Fatalf("examples/%s.yaml has no check here: add one", name)
			}
			if out, code := agent("undo"); code != 0 {
				t.Fatalf("undo: exit %d\n%s", code, out)
			}
			if after := treeOf(t, homeDir); after != before {
				t.Errorf("after undo:\n%s\nbefore the run:\n%s", after, before)
			}
		})
	}
}
