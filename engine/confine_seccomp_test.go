package engine_test

// The seccomp filters of the levels (issue 26): a step rated safe — forced
// by the policy, so that the kernel and not the classifier is what stops
// it — cannot send a UDP datagram, change a file's mode or another
// process's priority, I/O class or limits, locally and over a real sshd
// (the launcher serving as the connection's worker, its shells started
// ahead included); a medium one may use the network and change modes,
// but not another process. The same steps unconfined do it all, or the
// test proves nothing.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"golang.org/x/sys/unix"
)

// sysBed is an attackBed with agent-sys, whose attacks seccomp holds, a
// file to change the mode of and a UDP listener.
type sysBed struct {
	*attackBed
	file string
	udp  net.PacketConn
}

func newSysBed(t *testing.T, parent string) *sysBed {
	t.Helper()
	if !confine.Seccomp() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel takes no seccomp filter")
		}
		t.Skip("the kernel takes no seccomp filter")
	}
	b := &sysBed{attackBed: newAttackBed(t, parent)}
	// The victim holds no capability: as root, the kernel already
	// refuses a process with fewer capabilities (a confined step) to
	// change the priority of one with more (commoncap's cap_safe_nice),
	// which would hide what the filter does.
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to start a victim without capabilities")
	}
	b.victim.Process.Kill()
	b.victim.Wait()
	b.victim = exec.Command(setpriv, "--bounding-set=-all", "--inh-caps=-all", "sleep", "300")
	if err := b.victim.Start(); err != nil {
		t.Fatal(err)
	}
	b.file = filepath.Join(b.dir, "out", "f")
	if err := os.WriteFile(b.file, []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
case $1 in
udp) bash -c 'echo leak > /dev/udp/127.0.0.1/'"$2" ;;
chmod) chmod 600 "$2" ;;
wother) chmod o+w "$2" ;;
acl) setfacl -m o::rw "$2" ;;
umask) umask 0; mkdir "$2" && touch "$2/f" ;;
renice) renice -n 19 -p "$2" ;;
ionice) ionice -c3 -p "$2" ;;
prlimit) prlimit --nofile=64: --pid "$2" ;;
esac
`
	if err := os.WriteFile(filepath.Join(b.dir, "bin", "agent-sys"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if b.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.udp.Close() })
	return b
}

func (b *sysBed) policy(l safety.Level) safety.Policy {
	p := b.attackBed.policy(l)
	p.Commands["agent-sys"] = safety.Rule{Level: l}
	return p
}

func (b *sysBed) sys(action, arg string) planner.Step {
	return planner.Step{Tool: "execute_command", IgnoreErrors: true, Parameters: map[string]any{
		"command": filepath.Join(b.dir, "bin", "agent-sys") + " " + action + " " + arg}}
}

// state is what the attacks would change: the victim's nice value, I/O
// priority and open-files limit, the file's mode, and whether the
// listener got a datagram.
func (b *sysBed) state(t *testing.T) string {
	t.Helper()
	pid := b.victim.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	io, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, 1, uintptr(pid), 0)
	if e != 0 {
		t.Fatal(e)
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	nofile := ""
	for _, line := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			nofile = strings.Fields(line)[3]
		}
	}
	fi, err := os.Stat(b.file)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("nice=%s ioprio=%d nofile=%s mode=%v udp=%v", f[19-3], io, nofile, fi.Mode(), b.received())
}

// received reports whether the listener got a datagram since last asked.
func (b *sysBed) received() bool {
	got := false
	buf := make([]byte, 64)
	for wait := 200 * time.Millisecond; ; wait = 20 * time.Millisecond {
		b.udp.SetReadDeadline(time.Now().Add(wait))
		if _, _, err := b.udp.ReadFrom(buf); err != nil {
			return got
		}
		got = true
	}
}

// seccompAttacks runs agent-sys's attacks through open at safe (one plan:
// from the second step on, its shell may have been started ahead) and at
// medium, and checks what changed.
func seccompAttacks(t *testing.T, b *sysBed, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement) {
	t.Helper()
	pid := fmt.Sprint(b.victim.Process.Pid)
	port := fmt.Sprint(b.udp.LocalAddr().(*net.UDPAddr).Port)
	attacks := []struct{ action, arg, want string }{
		{"renice", pid, "blocked: change to another process's priority"},
		{"udp", port, "blocked: network connection"},
		{"chmod", b.file, "blocked: change to a file's mode"},
		{"ionice", pid, "blocked: change to another process's priority"},
		{"prlimit", pid, "blocked: change to another process's priority"},
	}
	var plan []planner.Step
	for _, a := range attacks {
		plan = append(plan, b.sys(a.action, a.arg))
	}
	before := b.state(t)
	safe := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: e}
	steps, warns := run(t, open, safe, plan...)
	if len(steps) != len(attacks) {
		t.Fatalf("safe: %d steps ran, want %d: %s (warnings %q)", len(steps), len(attacks), show(steps), warns)
	}
	for i, a := range attacks {
		if s := steps[i]; s.Risk != "safe" || s.Status != "error" || !strings.Contains(s.Output, a.want) {
			t.Errorf("safe %s: not blocked as it should be: %s", a.action, show(steps[i:i+1]))
		}
	}
	if after := b.state(t); after != before {
		t.Errorf("safe steps changed %s into %s", before, after)
	}

	medium := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e}
	// A medium step's chmod may not let every user write, and no access
	// list may do it past chmod (setfacl -m o::rw).
	// Nor may it create what every user may write after umask 0: the
	// mask keeps S_IWOTH (checked below).
	made := filepath.Join(filepath.Dir(b.file), "umask0")
	mediumSteps := []planner.Step{b.sys("renice", pid), b.sys("ionice", pid), b.sys("udp", port), b.sys("chmod", b.file), b.sys("wother", b.file)}
	_, aclErr := exec.LookPath("setfacl")
	if aclErr == nil {
		mediumSteps = append(mediumSteps, b.sys("acl", b.file))
	}
	mediumSteps = append(mediumSteps, b.sys("umask", made))
	steps, _ = run(t, open, medium, mediumSteps...)
	for _, p := range []string{made, filepath.Join(made, "f")} {
		if fi, err := os.Stat(p); err != nil {
			t.Errorf("medium: umask 0 then create: %v: %s", err, show(steps[len(steps)-1:]))
		} else if fi.Mode().Perm()&0o002 != 0 {
			t.Errorf("medium: umask 0 then create: %s is %v", p, fi.Mode())
		}
	}
	os.RemoveAll(made)
	if len(steps) != len(mediumSteps) || steps[0].Status != "error" || !strings.Contains(steps[0].Output, attacks[0].want) || steps[1].Status != "error" ||
		steps[2].Status != "ok" || steps[3].Status != "ok" || steps[4].Status != "error" || !strings.Contains(steps[4].Output, "may not give every user write") ||
		aclErr == nil && steps[5].Status != "error" {
		t.Errorf("medium: %s", show(steps))
	}
	want := strings.NewReplacer("udp=false", "udp=true", "-rw-r--r--", "-rw-------").Replace(before)
	if after := b.state(t); after != want {
		t.Errorf("medium steps changed %s into %s, want %s", before, after, want)
	}
	os.Chmod(b.file, 0o644)
}

func TestSeccompLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	b := newSysBed(t, t.TempDir())
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	seccompAttacks(t, b, open, engine.Enforcement{})

	// Unconfined, the same safe steps change it all: the kernel, not the
	// classifier or the machine, held them above.
	before := b.state(t)
	pid, port := fmt.Sprint(b.victim.Process.Pid), fmt.Sprint(b.udp.LocalAddr().(*net.UDPAddr).Port)
	steps, _ := run(t, open, engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil),
		Enforcement: engine.Enforcement{Off: true}}, b.sys("renice", pid), b.sys("ionice", pid), b.sys("prlimit", pid), b.sys("udp", port), b.sys("chmod", b.file))
	after := b.state(t)
	for _, field := range strings.Fields(before) {
		if strings.Contains(after, field) {
			t.Errorf("unconfined, the safe steps left %s as it was (%s): the test proves nothing", field, show(steps))
		}
	}
}

func TestSeccompSSHD(t *testing.T) {
	needLandlock(t)
	tmp, state := t.TempDir(), t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 TMPDIR=" + tmp + " XDG_STATE_HOME=" + state + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	b := newSysBed(t, t.TempDir())
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	seccompAttacks(t, b, open, engine.Enforcement{Launcher: confinetest.Launcher(t)})
}
