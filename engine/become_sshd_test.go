package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// becomeEnv is a real sshd the sudo test users may log in to, an
// ssh_config for it, and a root-only file to change.
type becomeEnv struct {
	d         *testenv.SSHD
	s         *testenv.Sudo
	sshConfig string
	dir, conf string // a root-only directory and root:adm 0640 file in it
}

func newBecomeEnv(t *testing.T) *becomeEnv {
	t.Helper()
	d, s := testenv.StartSudoSSHD(t)
	kh, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := writeFile(t, "known_hosts", string(kh))
	sshConfig := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host *\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 10\n",
		d.Port, d.IdentityFile, knownHosts))
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	dir, err := os.MkdirTemp("/root", ".agent-become-engine-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(conf, []byte("port = 80\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(conf, 0, 4); err != nil {
		t.Fatal(err)
	}
	return &becomeEnv{d: d, s: s, sshConfig: sshConfig, dir: dir, conf: conf}
}

// passUser is the host as the user whose sudo wants a password, and its
// become settings with that password (become per step: not All).
func (e *becomeEnv) passUser(t *testing.T) (engine.Target, *engine.HostBecome) {
	t.Helper()
	target, err := engine.HostTarget("web", engine.SSHOverrides{ConfigFile: e.sshConfig, User: e.s.PassUser})
	if err != nil {
		t.Fatal(err)
	}
	hb, err := engine.ResolveBecome(target, engine.Become{Password: e.s.Password})
	if err != nil || hb.All {
		t.Fatalf("ResolveBecome = %+v, %v", hb, err)
	}
	return target, hb
}

func checkOwnerMode(t *testing.T, p string, mode os.FileMode, uid, gid uint32) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != mode || st.Uid != uid || st.Gid != gid {
		t.Errorf("%s: mode %v owner %d:%d, want %v %d:%d", p, fi.Mode().Perm(), st.Uid, st.Gid, mode, uid, gid)
	}
}

// asked records the approval questions, answering yes.
type asked struct {
	mu sync.Mutex
	qs []string
}

func (a *asked) Approve(_ context.Context, req safety.Request) (safety.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.qs = append(a.qs, safety.FormatRequest(req))
	return safety.Decision{Allowed: true, Reason: "approved by test"}, nil
}

// TestBecomePlanStepsAndUndoSSHD: over real sshd as a user whose sudo
// wants a password, a plan's become: true steps read and edit a file the
// login user cannot even read, keeping its owner and mode; the other
// steps run as the login user; the approval says "as root"; the password
// is in no event; undo restores the file through sudo.
func TestBecomePlanStepsAndUndoSSHD(t *testing.T) {
	e := newBecomeEnv(t)
	target, hb := e.passUser(t)
	var log eventLog
	var q asked
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := engine.Open(ctx, target, engine.DialOptions{}, engine.HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAsk, &q), Emit: log.Emit, Become: hb,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	plan, err := planner.Parse(strings.NewReader(fmt.Sprintf(`steps:
  - tool: execute_command
    parameters: {command: "id -un; cat %[1]s"}
    ignore_errors: true
  - tool: read_file
    become: true
    parameters: {file_path: %[1]s}
    save_output_as: before
  - tool: edit_file
    become: true
    parameters: {file_path: %[1]s, search_pattern: "port = 80", replacement: "port = 8080"}
  - tool: execute_command
    become: true
    parameters: {command: "id -un"}
  - tool: execute_command
    become: true
    parameters: {command: "printf 'port = 9090\\n' > %[1]s"}
`, e.conf)), "become.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := h.RunPlan(ctx, plan)
	evs := log.all()
	if err != nil || !sum.Success {
		t.Fatalf("RunPlan: %+v %v\n%s", sum, err, dump(evs))
	}
	if b, _ := os.ReadFile(e.conf); string(b) != "port = 9090\n" {
		t.Errorf("file now %q", b)
	}
	checkOwnerMode(t, e.conf, 0o640, 0, 4)
	var steps []*event.Step
	for _, ev := range evs {
		if ev.Kind == event.KindStep {
			steps = append(steps, ev.Step)
		}
	}
	if len(steps) != 5 {
		t.Fatalf("%d step events\n%s", len(steps), dump(evs))
	}
	if steps[0].As != "" || !strings.HasPrefix(steps[0].Output, "[ERROR]") || !strings.Contains(steps[0].Output, e.s.PassUser) {
		t.Errorf("step 1 (login user) = as %q output %q", steps[0].As, steps[0].Output)
	}
	for _, st := range steps[1:] {
		if st.As != "root" || st.Status != "ok" {
			t.Errorf("step %d: as %q status %s output %q", st.Step, st.As, st.Status, st.Output)
		}
	}
	if !strings.Contains(steps[3].Output, "root") {
		t.Errorf("id -un through become: %q", steps[3].Output)
	}
	// The shell command's target, which the login user cannot even look
	// at, was saved through sudo before it ran (else it would be high and
	// refused as not undoable).
	if j := steps[4].Journaled; len(j) != 1 || j[0] != e.conf || steps[4].Risk == "" {
		t.Errorf("become shell step: journaled %q risk %q reasons %q", j, steps[4].Risk, steps[4].Reasons)
	}
	if out := dump(evs); strings.Contains(out, e.s.Password) {
		t.Error("the become password is in an event")
	}
	var asRoot int
	for _, s := range q.qs {
		if strings.Contains(strings.SplitN(s, "\n", 2)[0], " as root") {
			asRoot++
		}
	}
	if asRoot == 0 {
		t.Errorf("no approval question said \"as root\": %q", q.qs)
	}

	// undo: the journal says the file was changed as root; it is put back
	// through sudo, owner and mode kept.
	stateDir, err := statedir.Dir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, nil); err == nil {
		t.Error("undo through sudo -n (no password) succeeded where sudo wants one")
	}
	acts, err := engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, hb)
	if err != nil || len(acts) == 0 {
		t.Fatalf("Undo = %v, %v", acts, err)
	}
	if b, _ := os.ReadFile(e.conf); string(b) != "port = 80\n" {
		t.Errorf("after undo %q", b)
	}
	checkOwnerMode(t, e.conf, 0o640, 0, 4)
}

// TestBecomeInventorySSHD: ansible_become* in an inventory makes every
// step of a host run as root (id -un says root), a wrong password fails
// that host only, with a clear error and quickly, and settings agent
// cannot act on refuse the selection naming the variable and the host.
func TestBecomeInventorySSHD(t *testing.T) {
	e := newBecomeEnv(t)
	inv := writeFile(t, "hosts.ini", fmt.Sprintf(`[web]
good ansible_user=%[1]s ansible_become=yes ansible_become_user=root ansible_become_password=%[2]s
nopw ansible_user=%[3]s ansible_become=true
wrong ansible_user=%[1]s ansible_become=yes ansible_become_pass=wrong-%[2]s
tty ansible_user=%[4]s ansible_become=yes
plain ansible_user=%[3]s
`, e.s.PassUser, e.s.Password, e.s.NoPassUser, e.s.TTYUser))
	hosts, err := engine.SelectHosts(engine.InventorySpec{Sources: []string{inv}}, "", engine.SSHOverrides{ConfigFile: e.sshConfig})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	b, err := engine.OpenBatch(engine.BatchOptions{
		Hosts: hosts, Forks: 5, Policy: safety.DefaultPolicy(),
		Approver: safety.NewApprover(safety.ModeAll, nil, safety.WithScope(safety.ScopeBatch)), Emit: log.Emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	plan, err := planner.Parse(strings.NewReader("steps:\n  - tool: execute_command\n    parameters: {command: id -un}\n"), "id.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := b.RunPlan(ctx, plan)
	if ctx.Err() != nil {
		t.Fatal("the batch hung until the deadline")
	}
	// tty: sudoers requiretty, sudo gets a pty (as Ansible's -b).
	want := map[string]string{"good": "root", "nopw": "root", "tty": "root", "plain": e.s.NoPassUser}
	outs := map[string]string{}
	for _, ev := range log.all() {
		if ev.Kind == event.KindStep {
			outs[ev.Host] = strings.TrimSpace(ev.Step.Output)
		}
	}
	for _, hr := range res.Hosts {
		switch hr.Host {
		case "wrong":
			if hr.Status != event.HostFailed || !strings.Contains(hr.Err, "become") {
				t.Errorf("%s: %+v, want failed with a become error", hr.Host, hr)
			}
		default:
			if hr.Status != event.HostOK || outs[hr.Host] != want[hr.Host] {
				t.Errorf("%s: %+v, id -un = %q, want %q", hr.Host, hr, outs[hr.Host], want[hr.Host])
			}
		}
	}
	if out := dump(log.all()); strings.Contains(out, e.s.Password) {
		t.Error("a become password is in an event")
	}

	for _, tc := range []struct{ line, want string }{
		{"h ansible_become=yes ansible_become_method=su", "ansible_become_method"},
		{"h ansible_become=maybe", "ansible_become=\"maybe\" is not a boolean"},
		{"h ansible_become_user='-x'", "ansible_become_user"},
		{"h ansible_become_flags='-i'", "ansible_become_flags"},
		{"h ansible_become_exe='sudo -i'", "ansible_become_exe"},
	} {
		f := writeFile(t, "bad.ini", "[g]\n"+tc.line+"\n")
		_, err := engine.SelectHosts(engine.InventorySpec{Sources: []string{f}}, "", engine.SSHOverrides{ConfigFile: e.sshConfig})
		var ce engine.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "host h") {
			t.Errorf("%s: %v, want a ConfigError naming %q and the host", tc.line, err, tc.want)
		}
	}
	_ = transport.ErrBecome
}
