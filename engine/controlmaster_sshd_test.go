package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// cmPlan uses every tool that moves bytes: a confined command, write,
// edit and read of a file, an upload and a download.
const cmPlan = `
name: control master
steps:
  - tool: execute_command
    parameters: {command: "mkdir -p ROOT/d && echo hello > ROOT/d/a && cat ROOT/d/a"}
  - tool: write_file
    parameters: {file_path: "ROOT/d/b", content: "one\n"}
  - tool: edit_file
    parameters: {file_path: "ROOT/d/b", search_pattern: "one", replacement: "two"}
  - tool: read_file
    parameters: {file_path: "ROOT/d/b"}
    save_output_as: b
  - tool: upload_file
    parameters: {local_path: "UP", remote_path: "ROOT/d/up"}
  - tool: download_file
    parameters: {local_path: "DOWN", remote_path: "ROOT/d/a"}
`

// TestPlanThroughControlMaster runs a plan in the default mode (--approve
// medium: commands confined by the launcher kept on the host, the undo
// journal) on a host whose ssh_config names the operator's live
// ControlMaster: every step goes through the master, and sshd sees its
// login alone. With --no-control-master (SSHOverrides.NoControlMaster)
// agent logs in itself.
func TestPlanThroughControlMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the launcher and starts sshd")
	}
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	launcher := confinetest.Launcher(t)
	home := t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	localState(t)
	t.Setenv("SSH_AUTH_SOCK", "")
	m := testenv.StartControlMaster(t, d.Host)
	cfgFile := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host cm\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ControlMaster auto\n  ControlPath %s\n",
		d.Port, d.User, d.IdentityFile, d.KnownHosts, m.Socket))
	policy := safety.DefaultPolicy()

	// The second run finds the launcher and its rules kept by the first: a
	// safe read_file of a file in a directory a medium step of this run
	// made is allowed where the kernel allows it, though the rules files
	// read back predate the directory (LevelBlocked asks the kernel).
	run := func(name string, o engine.SSHOverrides, ephemeral bool) {
		t.Helper()
		root := filepath.Join(t.TempDir(), name)
		local := t.TempDir()
		t.Chdir(local) // a download writes in the working directory only
		up := filepath.Join(local, "up")
		if err := os.WriteFile(up, []byte("uploaded "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		down := filepath.Join(local, "down")
		text := strings.NewReplacer("ROOT", root, "UP", up, "DOWN", down).Replace(cmPlan)
		plan, err := planner.Parse(strings.NewReader(text), "plan.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := planner.Validate(plan, tools.Default(policy), nil); err != nil {
			t.Fatal(err)
		}
		o.ConfigFile = cfgFile
		target, err := engine.HostTarget("cm", o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var mu sync.Mutex
		var warned []string
		h, err := engine.Open(ctx, target, engine.DialOptions{SSH: sshtr.Options{Warn: func(s string) {
			mu.Lock()
			warned = append(warned, s)
			mu.Unlock()
		}}}, engine.HostOptions{
			Policy: policy, Approver: safety.NewApprover(safety.ModeMedium, nil),
			Enforcement: engine.Enforcement{Launcher: launcher, Require: true, Ephemeral: ephemeral},
		})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := h.RunPlan(ctx, plan)
		h.Close()
		if err != nil || !sum.Success || sum.Steps != 6 {
			t.Fatalf("%s: %+v, %v; failed: %+v", name, sum, err, sum.Failed)
		}
		for p, want := range map[string]string{
			root + "/d/a": "hello\n", root + "/d/b": "two\n", root + "/d/up": "uploaded " + name + "\n", down: "hello\n",
		} {
			if b, err := os.ReadFile(p); err != nil || string(b) != want {
				t.Errorf("%s: %s: %q, %v; want %q", name, p, b, err, want)
			}
		}
		if len(warned) != 0 {
			t.Errorf("%s: warnings %q", name, warned)
		}
	}
	run("master", engine.SSHOverrides{}, false)
	if n := d.Logins(); n != 1 {
		t.Errorf("sshd saw %d logins, want the master's one:\n%s", n, d.Log())
	}
	run("own", engine.SSHOverrides{NoControlMaster: true}, false)
	if n := d.Logins(); n != 2 {
		t.Errorf("with NoControlMaster sshd saw %d logins, want 2 (the master's, agent's own)", n)
	}
}
