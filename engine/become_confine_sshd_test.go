package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/testenv"
)

// TestBecomeNonRootConfinedSSHD: over real sshd, logged in as one user
// and becoming another, unprivileged one (agent-other-uid) at
// --require-enforcement, an unapproved step is confined by a launcher the
// become user can run — kept in that user's own private directory, not
// the login user's 0700 one — so a write the classifier let through is
// refused by the kernel, while the same step without the layer writes.
// A medium step's change to that user's file, and an append past the
// journal's file cap, are undone through become.
func TestBecomeNonRootConfinedSSHD(t *testing.T) {
	needLandlock(t)
	e := newBecomeEnv(t)
	target, err := engine.HostTarget("web", engine.SSHOverrides{ConfigFile: e.sshConfig, User: e.s.NoPassUser})
	if err != nil {
		t.Fatal(err)
	}
	becomeConfined(t, target)
}

// TestBecomeNonRootConfinedLocal: the same on this machine (as root,
// becoming agent-other-uid), where agent's own rules directory is
// private: the become user's launcher and rules are its own there too.
func TestBecomeNonRootConfinedLocal(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("sudo to another user without a password needs root")
	}
	testenv.SetupSudo(t)
	t.Setenv("CI", "true")
	localState(t)
	becomeConfined(t, engine.Target{Connection: engine.ConnLocal})
}

func becomeConfined(t *testing.T, target engine.Target) {
	other := testenv.StartOtherUser(t)
	hb, err := engine.ResolveBecome(target, engine.Become{Enabled: true, User: other.Name})
	if err != nil || !hb.All {
		t.Fatalf("ResolveBecome = %+v, %v", hb, err)
	}
	// The bed belongs to the become user; its parent lets it in.
	parent, err := os.MkdirTemp("", "agent-become-confine-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	os.Chmod(parent, 0o755)
	b := newAttackBed(t, parent)
	if out, err := exec.Command("chown", "-R", other.Name, b.dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	// The become user has no home (/nonexistent): its launcher goes to
	// /tmp/agent-UID, removed before and after.
	launchTmp := filepath.Join("/tmp", "agent-"+strconv.Itoa(int(other.UID)))
	os.RemoveAll(launchTmp)
	t.Cleanup(func() { os.RemoveAll(launchTmp) })
	open := func(o engine.HostOptions) (*engine.Host, error) {
		o.Become = hb
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	enf := engine.Enforcement{Launcher: confinetest.Launcher(t), Require: true}
	safe := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: enf}
	steps, warns := run(t, open, safe, b.step("write", b.out+"/y"))
	if len(steps) != 1 || steps[0].Status == "ok" {
		t.Fatalf("the kernel let the become user's safe step write: %s %q", show(steps), warns)
	}
	if !strings.Contains(steps[0].Output, "[blocked: write to "+b.out+"/y") {
		t.Errorf("the refusal is not the kernel's: %s %q", show(steps), warns)
	}
	if _, err := os.Stat(b.out + "/y"); err == nil {
		t.Fatalf("%s/y written by a confined safe step", b.out)
	}
	// The launcher ran from the become user's own private directory.
	fi, err := os.Stat(filepath.Join(launchTmp, "agent", "launch"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != other.UID || fi.Mode().Perm() != 0o700 {
		t.Errorf("the become user's launch directory: %v %v", fi, err)
	}
	// Without the layer the same step writes, as the become user.
	off := safe
	off.Enforcement = engine.Enforcement{Off: true}
	steps, _ = run(t, open, off, b.step("write", b.out+"/y"))
	if len(steps) != 1 || steps[0].Status != "ok" {
		t.Fatalf("unconfined: %s", show(steps))
	}
	if fi, err := os.Stat(b.out + "/y"); err != nil || fi.Sys().(*syscall.Stat_t).Uid != other.UID {
		t.Fatalf("unconfined, the step did not write as %s: %v %v", other.Name, fi, err)
	}

	// A medium step, confined and journaled, undone through become.
	f := filepath.Join(b.out, "data")
	if err := os.WriteFile(f, []byte("precious\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chown(f, int(other.UID), int(other.GID))
	h, err := open(engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: enf})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Executor().RunStep(context.Background(), shellStep("echo changed > "+f))
	name, session, tr := h.Name, h.Session, h.Transport()
	if err != nil || r.Status != "ok" || r.Risk.Level != safety.Medium || len(r.Journaled) != 1 {
		h.Close()
		t.Fatalf("medium step: %v %+v", err, r)
	}
	if b, _ := os.ReadFile(f); string(b) != "changed\n" {
		h.Close()
		t.Fatalf("the medium step did not write: %q", b)
	}
	// Grown past the journal's 10 MiB file cap, as the become user: undo
	// still takes it back (its size and time read through sudo).
	r, err = h.Executor().RunStep(context.Background(), shellStep("seq 1 2000000 >> "+f))
	if err != nil || r.Status != "ok" || strings.Contains(r.Observation, "more than undo compares") {
		h.Close()
		t.Fatalf("append past the cap: %v %+v", err, r)
	}
	stateDir, _ := statedir.Dir()
	if _, err := engine.Undo(context.Background(), tr, stateDir, session, name, false, hb); err != nil {
		h.Close()
		t.Fatalf("undo: %v", err)
	}
	h.Close()
	checkOwnerMode(t, f, 0o640, other.UID, other.GID)
	if b, _ := os.ReadFile(f); string(b) != "precious\n" {
		t.Errorf("after undo: %d bytes, want the original %q", len(b), "precious\n")
	}
}
