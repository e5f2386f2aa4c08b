package engine_test

// Kernel enforcement of levels (issue 13): a step the classifier rates
// safe — forced by the policy, so that the kernel and not the classifier
// is what stops it — cannot write, connect, signal or read a secret,
// locally and over a real sshd; a medium one cannot reach what the policy
// protects; by default the launcher is kept on an SSH host, sent once and
// reused, a tampered one is refused, and nothing an unapproved step does
// can replace it or its rules; with --ephemeral it leaves nothing there; a
// kernel without Landlock is reported once per host.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// attackBed is a scratch directory on the host with the attacker program
// agent-evil in a bin directory the policy trusts, a secret and a
// protected start-up file the policy names, and what the attacks aim at.
type attackBed struct {
	dir, secret, rc, out string
	victim               *exec.Cmd
	port                 int
}

func newAttackBed(t *testing.T, parent string) *attackBed {
	t.Helper()
	dir, err := os.MkdirTemp(parent, ".agent-confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := &attackBed{dir: dir, secret: filepath.Join(dir, "secret", "key"), rc: filepath.Join(dir, "rc"), out: filepath.Join(dir, "out")}
	for _, d := range []string{"bin", "secret", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(b.secret, []byte("SECRETKEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.rc, []byte("rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// agent-evil ACTION: one attack per call.
	script := `#!/bin/sh
case $1 in
write) echo pwned > "$2" ;;
append) echo pwned >> "$2" ;;
read) cat "$(dirname "$0")/../secret/key" ;;
connect) bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$2"' && echo connected' ;;
signal) kill -TERM "$2" ;;
worker) read -r _ _ _ w _ < /proc/$PPID/stat; for m in /proc/$w/mem /proc/$w/task/*/mem; do (exec 3<>"$m") 2>/dev/null && { echo reached; exit 0; }; done; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "bin", "agent-evil"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b.port = tcpSink(t)
	b.victim = exec.Command("sleep", "300")
	if err := b.victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.victim.Process.Kill(); b.victim.Wait() })
	return b
}

// policy rates agent-evil at level l and protects the bed's secret and rc.
func (b *attackBed) policy(l safety.Level) safety.Policy {
	p := safety.DefaultPolicy()
	p.BinDirs = append(p.BinDirs, filepath.Join(b.dir, "bin"))
	p.Commands["agent-evil"] = safety.Rule{Level: l}
	p.SensitivePaths = append(p.SensitivePaths, filepath.Dir(b.secret))
	p.ProtectedPaths = append(p.ProtectedPaths, b.rc)
	return p
}

func (b *attackBed) step(args ...string) planner.Step {
	return planner.Step{Tool: "execute_command", Parameters: map[string]any{
		"command": filepath.Join(b.dir, "bin", "agent-evil") + " " + strings.Join(args, " ")}}
}

// run runs one step on a fresh Host and returns its step event, the
// warnings and what the host says about enforcement.
func run(t *testing.T, open func(engine.HostOptions) (*engine.Host, error), o engine.HostOptions, steps ...planner.Step) ([]*event.Step, []string) {
	t.Helper()
	var log eventLog
	o.Emit = log.Emit
	h, err := open(o)
	if err != nil {
		t.Fatal(err)
	}
	h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "attack", Steps: steps}}})
	h.Close()
	var out []*event.Step
	var warns []string
	for _, ev := range log.all() {
		switch ev.Kind {
		case event.KindStep:
			out = append(out, ev.Step)
		case event.KindWarning:
			warns = append(warns, ev.Warning.Text)
		}
	}
	return out, warns
}

// attacks runs every attack at level safe (and the medium ones at medium)
// through open, and checks the kernel stopped each with an observation
// that says so, and that nothing changed.
func attacks(t *testing.T, b *attackBed, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	safe := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: e}
	for _, tc := range []struct {
		name, want string
		step       planner.Step
	}{
		{"write", "blocked: write to ", b.step("write", b.out+"/x")},
		{"read a secret", "blocked: read of ", b.step("read")},
		{"connect", "blocked: network connection", b.step("connect", fmt.Sprint(b.port))},
		{"signal", "blocked: signal to a process outside the step", b.step("signal", fmt.Sprint(b.victim.Process.Pid))},
	} {
		steps, warns := run(t, open, safe, tc.step)
		if len(steps) != 1 || steps[0].Risk != "safe" || steps[0].Status != "error" || !strings.Contains(steps[0].Output, tc.want) ||
			strings.Contains(steps[0].Output, "SECRETKEY") || strings.Contains(steps[0].Output, "connected") {
			t.Errorf("safe %s: not blocked as it should be: %s (warnings %q)", tc.name, show(steps), warns)
		}
	}
	if _, err := os.Stat(b.out + "/x"); err == nil {
		t.Error("a safe step wrote a file")
	}
	if err := b.victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the victim process is gone: %v", err)
	}

	// The process that started the step (agent locally, the launcher
	// serving as the worker over SSH) is out of its reach: its memory
	// would be every level's.
	medium := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e}
	for _, o := range []engine.HostOptions{safe, medium} {
		if steps, _ := run(t, open, o, b.step("worker")); len(steps) != 1 || steps[0].Status == "ok" || strings.Contains(steps[0].Output, "reached") {
			t.Errorf("a step opened its worker's memory: %s", show(steps))
		}
	}
	steps, _ := run(t, open, medium, b.step("write", b.out+"/x"), b.step("append", b.rc))
	if len(steps) != 2 || steps[0].Status != "ok" || steps[1].Status != "error" || !strings.Contains(steps[1].Output, "blocked: write to ") {
		t.Errorf("medium: %s", show(steps))
	}
	if rc, _ := os.ReadFile(b.rc); string(rc) != "rc\n" {
		t.Errorf("medium wrote the protected file: %q", rc)
	}
	if x, _ := os.ReadFile(b.out + "/x"); string(x) != "pwned\n" {
		t.Errorf("medium could not write outside the protected files: %q", x)
	}
}

func TestKernelBlocksLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	b := newAttackBed(t, t.TempDir())
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	attacks(t, b, open, engine.Enforcement{})

	// A medium step cannot rewrite the rules a step under a wrapper
	// (sudo → agent __confine -rules FILE) reads: they are in agent's
	// state directory.
	state := os.Getenv("XDG_STATE_HOME")
	medium := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil)}
	steps, _ := run(t, open, medium, b.step("write", filepath.Join(state, "agent", "confine-*", "safe.rules")))
	if len(steps) != 1 || steps[0].Status == "ok" || strings.Contains(steps[0].Output, "No such file") {
		t.Errorf("a medium step at the local rules: %s", show(steps))
	}

	// The same safe step with the kernel enforcement off: the classifier
	// alone lets it write (what the kernel stopped above).
	steps, _ = run(t, open, engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil),
		Enforcement: engine.Enforcement{Off: true}}, b.step("write", b.out+"/y"))
	if len(steps) != 1 || steps[0].Status != "ok" {
		t.Fatalf("unconfined: %+v", steps)
	}
	if _, err := os.Stat(b.out + "/y"); err != nil {
		t.Error("without the kernel the safe step did not write: the test proves nothing")
	}
}

func TestKernelBlocksSSHD(t *testing.T) {
	needLandlock(t)
	// The host's sessions get a TMPDIR and an XDG_STATE_HOME of the
	// test's own: the launcher is kept in the latter.
	tmp, state := t.TempDir(), t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 TMPDIR=" + tmp + " XDG_STATE_HOME=" + state + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	// Not in the home directory: as root it is /root, a system root no
	// unapproved step may write.
	b := newAttackBed(t, t.TempDir())
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	// --ephemeral: nothing stays on the host. Each session sends the
	// launcher into a directory of its own in agent's state directory
	// there, computes its rules there and removes it all when it closes,
	// with the directories it made.
	attacks(t, b, open, engine.Enforcement{Launcher: confinetest.Launcher(t), Ephemeral: true})
	os.Remove(b.out + "/x") // the medium step's
	for _, dir := range []string{state, tmp} {
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
			t.Errorf("left on the host with --ephemeral: %q", left)
		}
	}

	// By default the launcher and the levels' rules are kept in agent's
	// state directory on the host.
	e := engine.Enforcement{Launcher: confinetest.Launcher(t)}
	launchDir := filepath.Join(state, "agent", "launch")
	// What another build of agent left a month ago is removed when this
	// one computes its rules.
	if err := os.MkdirAll(launchDir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-40 * 24 * time.Hour)
	for _, name := range []string{"agent-launch-0ld", "rules-0ld-6.1.safe.rules", "rules-0ld-6.1.ok"} {
		p := filepath.Join(launchDir, name)
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	attacks(t, b, open, e)
	// One launcher kept for every Host (sent once, then found by its
	// hash), with the levels' rules (shared by the sessions); nothing of
	// a session's own.
	var exePath string
	kept := func() os.FileInfo {
		t.Helper()
		exe, _ := filepath.Glob(filepath.Join(launchDir, "agent-launch-*[0-9a-f]"))
		stamps, _ := filepath.Glob(filepath.Join(launchDir, "agent-launch-*.ok"))
		rules, _ := filepath.Glob(filepath.Join(launchDir, "rules-*"))
		all, _ := filepath.Glob(filepath.Join(launchDir, "*"))
		hidden, _ := filepath.Glob(filepath.Join(launchDir, ".*"))
		if len(exe) != 1 || len(stamps) > 1 || len(hidden) != 0 || len(all) != 1+len(stamps)+len(rules) || len(rules) != 3 {
			t.Fatalf("in the launcher's directory: %q %q, want the launcher, its stamp and one set of rules", all, hidden)
		}
		fi, err := os.Stat(exe[0])
		if err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("the launcher: %v %v", fi.Mode(), err)
		}
		exePath = exe[0]
		return fi
	}
	first := kept()

	// Safe steps in a row on one connection: from the second on, the
	// step's shell was started ahead under the launcher (transport.Command
	// Ahead), and it is as confined.
	safe := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: e}
	var three []planner.Step
	for _, f := range []string{"x1", "x2", "x3"} {
		st := b.step("write", b.out+"/"+f)
		st.IgnoreErrors = true
		three = append(three, st)
	}
	steps, _ := run(t, open, safe, three...)
	for i, st := range steps {
		if st.Status != "error" || !strings.Contains(st.Output, "blocked: write to ") {
			t.Errorf("safe step %d of 3 on one connection: %s", i+1, show(steps))
		}
	}
	if len(steps) != 3 {
		t.Errorf("%d steps ran, want 3", len(steps))
	}
	for _, f := range []string{"x1", "x2", "x3"} {
		if _, err := os.Stat(b.out + "/" + f); err == nil {
			t.Errorf("a safe step wrote %s", f)
		}
	}
	// A medium step cannot touch the launcher or the rules the next
	// steps run under.
	medium := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e}
	steps, _ = run(t, open, medium, b.step("write", filepath.Join(launchDir, "x")))
	if len(steps) != 1 || steps[0].Status != "error" || !strings.Contains(steps[0].Output, "blocked: write to ") {
		t.Errorf("medium step into the launcher's directory: %s", show(steps))
	}
	// Nor can a step of either level replace, remove or empty the
	// launcher itself or its rules.
	rulesFiles, _ := filepath.Glob(filepath.Join(launchDir, "rules-*.rules"))
	for _, o := range []engine.HostOptions{safe, medium} {
		for _, target := range append([]string{exePath}, rulesFiles...) {
			for _, act := range []string{"write", "append"} {
				steps, _ = run(t, open, o, b.step(act, target))
				// The launcher runs as the served worker: writing it is
				// also ETXTBSY. Its rules are the kernel's to hold.
				busy := target == exePath && strings.Contains(steps[0].Output, "Text file busy")
				if len(steps) != 1 || steps[0].Status != "error" || !strings.Contains(steps[0].Output, "blocked: write to ") && !busy {
					t.Errorf("%s step: %s %s: %s", steps[0].Risk, act, target, show(steps))
				}
			}
		}
		rm := planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "rm -f " + exePath}}
		o.Policy.Commands["rm"] = safety.Rule{Level: o.Policy.Commands["agent-evil"].Level}
		steps, _ = run(t, open, o, rm)
		if _, err := os.Stat(exePath); err != nil {
			t.Fatalf("a %s step removed the kept launcher: %s", steps[0].Risk, show(steps))
		}
	}
	if again := kept(); !os.SameFile(first, again) || !again.ModTime().Equal(first.ModTime()) {
		t.Error("the kept launcher was sent again or replaced")
	}

	// A kept launcher changed behind agent's back (same owner and mode,
	// another content) is refused by its SHA-256: no unapproved step runs.
	good, err := os.ReadFile(exePath)
	if err != nil {
		t.Fatal(err)
	}
	replace := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(exePath+".new", b, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(exePath+".new", exePath); err != nil {
			t.Fatal(err)
		}
	}
	replace(append(good[:len(good):len(good)], 0))
	steps, _ = run(t, open, safe, b.step("write", b.out+"/x6"))
	if len(steps) != 1 || steps[0].Status == "ok" || !strings.Contains(steps[0].Output, "is not the launcher agent sent") {
		t.Errorf("a tampered launcher: %s", show(steps))
	}
	replace(good)
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("left in the host's TMPDIR: %q", left)
	}

	// A launcher directory another user could write is refused: the
	// unapproved step does not run.
	if err := os.Chmod(launchDir, 0o777); err != nil {
		t.Fatal(err)
	}
	steps, _ = run(t, open, safe, b.step("write", b.out+"/x4"))
	if len(steps) != 1 || steps[0].Status == "ok" || !strings.Contains(steps[0].Output, "not safe to use") {
		t.Errorf("a launcher directory writable by others: %s", show(steps))
	}
	os.Chmod(launchDir, 0o700)
	if err := os.Chown(launchDir, 65534, 65534); err == nil {
		steps, _ = run(t, open, safe, b.step("write", b.out+"/x5"))
		if len(steps) != 1 || steps[0].Status == "ok" || !strings.Contains(steps[0].Output, "not safe to use") {
			t.Errorf("a launcher directory of another user: %s", show(steps))
		}
	}
}

// TestKernelWithoutLandlock simulates a kernel without Landlock: the host
// says once that it does not enforce, steps run with the classifier alone;
// with --require-enforcement the unapproved step is refused and the run
// stops.
func TestKernelWithoutLandlock(t *testing.T) {
	localState(t)
	b := newAttackBed(t, t.TempDir())
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	noLandlock := func(context.Context) (int, string, error) { return 0, "5.4.0-42-generic", nil }
	o := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil),
		Enforcement: engine.Enforcement{Probe: noLandlock}}
	steps, warns := run(t, open, o, b.step("write", b.out+"/a"), b.step("write", b.out+"/b"))
	if len(warns) != 1 || !strings.Contains(warns[0], "not enforced: kernel 5.4.0-42-generic has no Landlock") {
		t.Errorf("warnings: %q", warns)
	}
	if len(steps) != 2 || steps[0].Status != "ok" || steps[1].Status != "ok" {
		t.Errorf("steps: %+v", steps)
	}

	o.Policy.RequireEnforcement = true
	steps, warns = run(t, open, o, b.step("write", b.out+"/c"))
	if len(steps) != 1 || steps[0].Status != "denied" || !strings.Contains(steps[0].Output, "require-enforcement") {
		t.Errorf("required: %+v (warnings %q)", steps, warns)
	}
	if _, err := os.Stat(b.out + "/c"); err == nil {
		t.Error("an unapproved step ran unenforced despite --require-enforcement")
	}
}

// tcpSink is the port of a loopback listener that accepts connections
// and closes them, until the test ends: what a step blocked from
// connecting would have reached.
func tcpSink(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func needLandlock(t *testing.T) {
	t.Helper()
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
}

func show(steps []*event.Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "\n  [%d] %s risk=%s status=%s: %s", s.Step, s.Command, s.Risk, s.Status, s.Output)
	}
	return b.String()
}

// TestKernelNoLauncherSays: an agent built without the launcher (`go
// install`) says on the first host why it cannot confine there and how
// to get the launcher, and --require-enforcement refuses the step.
func TestKernelNoLauncherSays(t *testing.T) {
	needLandlock(t)
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 TMPDIR=" + t.TempDir() + " XDG_STATE_HOME=" + t.TempDir() + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	b := newAttackBed(t, t.TempDir())
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	none := func(arch string) ([]byte, error) {
		return nil, fmt.Errorf("this agent was built without the launcher for linux/%s (`go install` builds none)", arch)
	}
	o := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil),
		Enforcement: engine.Enforcement{Launcher: none}}
	steps, warns := run(t, open, o, b.step("write", b.out+"/a"))
	if len(warns) != 1 || !strings.Contains(warns[0], "not enforced: agent has no launcher for linux/") ||
		!strings.Contains(warns[0], "`go install` builds none") {
		t.Errorf("warnings: %q", warns)
	}
	if len(steps) != 1 {
		t.Errorf("steps: %+v", steps)
	}
	o.Policy.RequireEnforcement = true
	steps, _ = run(t, open, o, b.step("write", b.out+"/b"))
	if len(steps) != 1 || steps[0].Status != "denied" || !strings.Contains(steps[0].Output, "go install") {
		t.Errorf("required: %+v", steps)
	}
	if _, err := os.Stat(b.out + "/b"); err == nil {
		t.Error("the refused step ran")
	}
}
