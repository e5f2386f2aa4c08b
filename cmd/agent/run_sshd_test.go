package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestRunExampleOverSSHD runs the fix-script example against a real OpenSSH
// sshd, in a scratch directory of the real home, then undoes it.
func TestRunExampleOverSSHD(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	dir, err := os.MkdirTemp(d.Home, ".agent-run-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	script := filepath.Join(dir, "a.sh")
	orig := "#!/bin/sh\necho 1\n"
	if err := os.WriteFile(script, []byte(orig), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "true")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	agent := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"-F", d.SSHConfig, "--ssh-host", d.Alias}, args...), strings.NewReader(""), &out, &errOut)
		return out.String() + errOut.String(), code
	}
	// As root the home is /root, a system path where edits are high risk.
	mode := "medium"
	if os.Geteuid() == 0 {
		mode = "all"
	}
	out, code := agent("run", "../../examples/fix-script.yaml", "--var", "script="+script, "--approve", mode)
	if code != 0 || !strings.Contains(out, "success on "+d.Alias) {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(script); string(b) != "#!/bin/sh\necho 2\n" {
		t.Errorf("after run: %q", b)
	}
	out, code = agent("undo")
	if code != 0 || !strings.Contains(out, "restored "+script) {
		t.Fatalf("undo: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(script); string(b) != orig {
		t.Errorf("after undo: %q", b)
	}
}
