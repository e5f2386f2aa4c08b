package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/autoshell/agent/testenv"
)

// TestTaskScriptsOverSSHD runs the task_*_ssh.txtar scripts (the model
// driving tasks on "vub": the spec's three scenarios in both modes,
// --save-plan and replay, re-planning, Ctrl-C mid-step) against a real
// OpenSSH sshd instead of the in-process server. Each script gets its own
// sshd whose sessions have HOME set to a scratch directory ($REMOTE_HOME,
// removed afterwards), so that "~" on the host is that directory and the
// tester's real home is left alone; otherwise the environment is
// TestScripts'. Skipped without sshd, failed when CI=true.
func TestTaskScriptsOverSSHD(t *testing.T) {
	if _, err := testenv.SSHDPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real sshd test cannot run with CI=true: %v", err)
		}
		t.Skipf("skipping real sshd test: %v", err)
	}
	files, err := filepath.Glob("testdata/script/task_*_ssh.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no task_*_ssh scripts: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sublines": sublines, "jsonlines": jsonlines, "llm-script": llmScript, "llm-requests": llmRequests,
		},
		Setup: setupSSHDScript,
	})
}

// setupSSHDScript starts the script's sshd with its scratch home and sets
// the environment TestScripts' setup sets.
func setupSSHDScript(env *testscript.Env) error {
	launcherBesideScripts()
	remoteHome, err := os.MkdirTemp("", "agent-sshd-home-")
	if err != nil {
		return err
	}
	env.Defer(func() { os.RemoveAll(remoteHome) })
	// sshd applies SetEnv after it sets HOME from the password database.
	d, err := testenv.NewSSHD(testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + remoteHome + "\n"})
	if err != nil {
		return err
	}
	env.Defer(func() {
		if err := d.Close(); err != nil {
			env.T().Log("close sshd: " + err.Error())
		}
	})
	home := filepath.Join(env.WorkDir, "home")
	if err := d.WriteOperatorHome(home, "vub"); err != nil {
		return err
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		return err
	}
	env.Setenv("EXAMPLES", examples)
	env.Setenv("HOME", home)
	env.Setenv("SSH_AUTH_SOCK", "")
	env.Setenv("CI", "true")
	env.Setenv("GORACE", os.Getenv("GORACE"))
	env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
	env.Setenv("REMOTE_HOME", remoteHome)
	env.Setenv("REMOTE_USER", d.User)
	env.Setenv("REMOTE_PORT", d.Addr[strings.LastIndex(d.Addr, ":")+1:])
	env.Setenv("SSH_HOST", "vub")
	env.Setenv("TARGET", "vub")
	return startScriptLLM(env)
}

// localTaskScripts are the task scripts that run on this machine too: the
// spec's three scenarios in both modes, re-planning and Ctrl-C mid-step.
// (task_saveplan_ssh replays on an SSH host and this machine: it needs both.)
var localTaskScripts = []string{"task_adaptive_ssh", "task_react_ssh", "task_logerrors_ssh", "task_flipflag_ssh",
	"task_replan_ssh", "task_interrupt_ssh"}

// TestTaskScriptsLocal runs localTaskScripts without SSH: --ssh-host= (empty)
// selects this machine, named "local", and $REMOTE_HOME is the operator's
// HOME, which "~" means here.
func TestTaskScriptsLocal(t *testing.T) {
	var files []string
	for _, name := range localTaskScripts {
		files = append(files, filepath.Join("testdata/script", name+".txtar"))
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sublines": sublines, "jsonlines": jsonlines, "llm-script": llmScript, "llm-requests": llmRequests,
		},
		Setup: func(env *testscript.Env) error {
			launcherBesideScripts()
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("SSH_AUTH_SOCK", "")
			env.Setenv("CI", "true")
			env.Setenv("GORACE", os.Getenv("GORACE"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("REMOTE_HOME", home)
			env.Setenv("SSH_HOST", "")
			env.Setenv("TARGET", "local")
			return startScriptLLM(env)
		},
	})
}

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
