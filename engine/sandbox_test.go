package engine_test

// --sandbox (issue 14 §2): every command, approved ones too, is confined
// to writes under the working directory, the temp directory and the
// allowed paths, and to no network unless allowed; the file tools obey
// the same rules. Real commands try to write outside, connect out and
// escape through a symbolic link and "..": all blocked with an
// observation that says so, while allowed work succeeds — locally and
// over a real sshd. Without Landlock --sandbox refuses to run (a
// configuration error: exit 2), unless best-effort.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// sandboxBed is a base directory holding the working directory, the temp
// directory, an allowed directory with a link to outside, and outside.
type sandboxBed struct {
	base, work, tmp, allowed, outside string
	port                              int
}

func newSandboxBed(t *testing.T) *sandboxBed {
	t.Helper()
	base := t.TempDir()
	b := &sandboxBed{base: base, work: filepath.Join(base, "work"), tmp: filepath.Join(base, "tmp"),
		allowed: filepath.Join(base, "allowed"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{b.work, b.tmp, b.allowed, b.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(b.outside, filepath.Join(b.allowed, "link")); err != nil {
		t.Fatal(err)
	}
	b.port = tcpSink(t)
	return b
}

func sh(cmd string) planner.Step {
	return planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}}
}

func writeFileStep(path string) planner.Step {
	return planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": path, "content": "x\n"}}
}

// sandboxRun runs the bed's attacks and allowed work at --approve all
// (nothing is confined by its level that high steps are not: the sandbox
// alone holds them) and checks each.
func sandboxRun(t *testing.T, b *sandboxBed, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	p := safety.DefaultPolicy()
	p.Sandbox, p.AllowWrite = safety.Sandbox{Mode: safety.SandboxOn}, []string{b.allowed + "/**"}
	o := engine.HostOptions{Policy: p, Approver: safety.NewApprover(safety.ModeAll, nil), Enforcement: e}
	connect := fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo connected'`, b.port)
	for _, tc := range []struct {
		name   string
		step   planner.Step
		ok     bool
		want   string
		target string // must not exist afterwards (blocked) or must (allowed)
	}{
		{"write outside", sh("echo x > " + b.outside + "/a"), false, "blocked by the sandbox: write to " + b.outside + "/a", b.outside + "/a"},
		{"write outside through an interpreter (high)", sh(`sh -c 'echo x > ` + b.outside + `/h'`), false, "blocked by the sandbox: write to", b.outside + "/h"},
		{"escape through a link", sh("echo x > " + b.allowed + "/link/b"), false, "blocked by the sandbox: write to", b.outside + "/b"},
		{"escape through ..", sh("echo x > " + b.allowed + "/../outside/c"), false, "blocked by the sandbox: write to", b.outside + "/c"},
		{"connect out", sh(connect), false, "blocked by the sandbox: network connection", ""},
		{"write_file outside", writeFileStep(b.outside + "/d"), false, "blocked by the sandbox: write to " + b.outside + "/d", b.outside + "/d"},
		{"write_file through a link", writeFileStep(b.allowed + "/link/e"), false, "blocked by the sandbox: write to " + b.outside + "/e", b.outside + "/e"},
		{"write allowed", sh("echo x > " + b.allowed + "/ok && cat " + b.allowed + "/ok"), true, "x", b.allowed + "/ok"},
		{"write the temp directory", sh("echo x > " + b.tmp + "/ok"), true, "", b.tmp + "/ok"},
		{"write_file allowed", writeFileStep(b.allowed + "/f"), true, "", b.allowed + "/f"},
		{"read anywhere", sh("ls " + b.outside), true, "", ""},
	} {
		steps, warns := run(t, open, o, tc.step)
		if len(steps) != 1 {
			t.Fatalf("%s: %d steps (warnings %q)", tc.name, len(steps), warns)
		}
		s := steps[0]
		if ok := s.Status == "ok"; ok != tc.ok || !strings.Contains(s.Output, tc.want) || strings.Contains(s.Output, "connected") {
			t.Errorf("%s: %s, want ok=%v with %q", tc.name, show(steps), tc.ok, tc.want)
		}
		if tc.target != "" {
			if _, err := os.Lstat(tc.target); (err == nil) != tc.ok {
				t.Errorf("%s: %s exists: %v", tc.name, tc.target, err == nil)
			}
		}
	}
	if left, _ := os.ReadDir(b.outside); len(left) > 0 {
		t.Errorf("written outside: %v", left)
	}

	// --allow-net lets the connection through.
	o.Policy.Sandbox.AllowNet = true
	steps, _ := run(t, open, o, sh(connect))
	if len(steps) != 1 || steps[0].Status != "ok" || !strings.Contains(steps[0].Output, "connected") {
		t.Errorf("--allow-net: %s", show(steps))
	}
}

func TestSandboxLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	b := newSandboxBed(t)
	t.Setenv("TMPDIR", b.tmp)
	t.Chdir(b.work)
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	sandboxRun(t, b, open, engine.Enforcement{})
	// The level's enforcement off: the sandbox still holds.
	steps, _ := run(t, open, engine.HostOptions{Policy: sandboxPolicy(b), Approver: safety.NewApprover(safety.ModeAll, nil),
		Enforcement: engine.Enforcement{Off: true}}, sh("echo x > "+b.outside+"/g"))
	if len(steps) != 1 || steps[0].Status == "ok" {
		t.Errorf("enforcement off: %s", show(steps))
	}
}

func sandboxPolicy(b *sandboxBed) safety.Policy {
	p := safety.DefaultPolicy()
	p.Sandbox, p.AllowWrite = safety.Sandbox{Mode: safety.SandboxOn}, []string{b.allowed + "/**"}
	return p
}

func TestSandboxSSHD(t *testing.T) {
	needLandlock(t)
	localState(t)
	b := newSandboxBed(t)
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 TMPDIR=" + b.tmp + " XDG_STATE_HOME=" + t.TempDir() + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	sandboxRun(t, b, open, engine.Enforcement{Launcher: confinetest.Launcher(t)})
	if left, _ := filepath.Glob(filepath.Join(b.tmp, "agent-launch.*")); len(left) > 0 {
		t.Errorf("the launcher was left on the host: %q", left)
	}
}

// TestSandboxWithoutLandlock: --sandbox on a kernel without Landlock
// refuses every command with a configuration error (exit 2), approved
// ones too; best-effort warns and runs.
func TestSandboxWithoutLandlock(t *testing.T) {
	localState(t)
	b := newSandboxBed(t)
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	noLandlock := func(context.Context) (int, string, error) { return 0, "5.4.0-42-generic", nil }
	o := engine.HostOptions{Policy: sandboxPolicy(b), Approver: safety.NewApprover(safety.ModeAll, nil),
		Enforcement: engine.Enforcement{Probe: noLandlock}}
	var log eventLog
	o.Emit = log.Emit
	h, err := open(o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "x", Steps: []planner.Step{sh("echo x > " + b.outside + "/a")}}}})
	h.Close()
	if !errors.As(err, new(engine.ConfigError)) || !strings.Contains(err.Error(), "sandbox cannot be applied: kernel 5.4.0-42-generic has no Landlock") {
		t.Errorf("without Landlock: %v", err)
	}
	if _, err := os.Stat(b.outside + "/a"); err == nil {
		t.Error("the command ran unconfined")
	}

	// best-effort: runs with a warning; the write list still holds, as a
	// permission, where the kernel cannot hold it.
	o.Policy.Sandbox.Mode = safety.SandboxBestEffort
	steps, warns := run(t, open, o, sh("echo x > "+b.allowed+"/b"))
	if len(steps) != 1 || steps[0].Status != "ok" || len(warns) != 1 || !strings.Contains(warns[0], "sandbox is not applied") {
		t.Errorf("best-effort: %s, warnings %q", show(steps), warns)
	}
	steps, _ = run(t, open, o, sh("echo x > "+b.outside+"/b"))
	if len(steps) != 1 || steps[0].Status != "denied" || !strings.Contains(steps[0].Output, "permissions of --allow-write") {
		t.Errorf("best-effort without the kernel: the write list did not hold: %s", show(steps))
	}
	if _, err := os.Stat(b.outside + "/b"); err == nil {
		t.Error("best-effort: a write outside the list ran")
	}
}
