package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestBecomeSecretsSSHD: a model-driven batch over real sshd whose
// inventory turns become on with a password: the steps run as root, and
// the password — templated into a command the model wrote, so that it is
// in the command line and in the output — is in no model request, no
// stdout or stderr (--json), no --out log or transcript, no audit line
// and no undo journal.
func TestBecomeSecretsSSHD(t *testing.T) {
	d, su := testenv.StartSudoSSHD(t)
	tmp := t.TempDir()
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	cfg := filepath.Join(tmp, "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 10\n",
		d.IdentityFile, d.KnownHosts)), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(tmp, "hosts.ini")
	if err := os.WriteFile(inv, []byte(fmt.Sprintf("web01 ansible_host=127.0.0.1 ansible_port=%d ansible_user=%s ansible_become=yes ansible_become_password=%s\n",
		d.Port, su.PassUser, su.Password)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/root", ".agent-become-cli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	secretFile := filepath.Join(dir, "pw.txt")
	srv := startBatchLLM(t,
		testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "config", "complexity": "simple",
			"phases": []map[string]any{{"phase": 1, "goal": "store the password as root"}}}))),
		testenv.Calls(testenv.Call("execute_command", args(map[string]any{
			"command": "id -un; printf '%s\\n' '{{ansible_become_password}}' | tee " + secretFile}))),
		testenv.Text("Stored."),
	)
	out := filepath.Join(tmp, "out")
	stdout, stderr, code := runAgent("-F", cfg, "-i", inv, "--approve", "all", "--json", "--out", out, "-c", "store the password as root")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(secretFile); err != nil || strings.TrimSpace(string(b)) != su.Password {
		t.Fatalf("the command did not run as root with the password templated: %q %v", b, err)
	}
	if !strings.Contains(stdout, "[REDACTED") {
		t.Errorf("the step's output and command were not redacted:\n%s", stdout)
	}
	if !strings.Contains(stdout, `"as":"root"`) {
		t.Errorf("no step event says it ran as root:\n%s", stdout)
	}
	check := func(what, text string) {
		t.Helper()
		if strings.Contains(text, su.Password) {
			t.Errorf("%s holds the become password", what)
		}
	}
	check("stdout", stdout)
	check("stderr", stderr)
	for i, r := range srv.Requests() {
		check(fmt.Sprintf("model request %d", i+1), string(r.Body))
	}
	files := 0
	for _, root := range []string{out, filepath.Join(tmp, "state")} {
		err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			files++
			check(p, string(b))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 3 { // the --out log and transcript, the audit log at least
		t.Errorf("only %d files written under --out and the state directory", files)
	}
}
