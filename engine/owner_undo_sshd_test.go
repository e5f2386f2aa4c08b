package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

// TestOwnersUndoSSHD, over real sshd: chown of a file and chgrp -R of a
// tree, run as root through become, are journaled with their owners
// (through sudo) and undo through sudo puts every owner back; the login
// user's own session that changed a root-owned file cannot give it back
// to root, and undo says so by name (an error, exit 1), its content put
// back all the same.
func TestOwnersUndoSSHD(t *testing.T) {
	e := newBecomeEnv(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(e.dir, "tree")
	must(os.MkdirAll(filepath.Join(tree, "sub"), 0o750))
	must(os.WriteFile(filepath.Join(tree, "sub", "f"), []byte("root's\n"), 0o600))
	must(os.Symlink("sub/f", filepath.Join(tree, "l")))
	before := snapshot(t, e.dir)

	target, hb := e.passUser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(t *testing.T, mode safety.Mode, plan string) (*engine.Host, []*event.Step) {
		t.Helper()
		var log eventLog
		h, err := engine.Open(ctx, target, engine.DialOptions{}, engine.HostOptions{
			Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(mode, nil), Emit: log.Emit, Become: hb})
		must(err)
		t.Cleanup(func() { h.Close() })
		p, err := planner.Parse(strings.NewReader(plan), "owners.yaml")
		must(err)
		if _, err := h.RunPlan(ctx, p); err != nil {
			t.Fatalf("RunPlan: %v\n%s", err, dump(log.all()))
		}
		var steps []*event.Step
		for _, ev := range log.all() {
			if ev.Kind == event.KindStep {
				steps = append(steps, ev.Step)
			}
		}
		return h, steps
	}
	stateDir, err := statedir.Dir()
	must(err)

	h, steps := run(t, safety.ModeAll, fmt.Sprintf(`steps:
  - tool: execute_command
    become: true
    parameters: {command: "chown 65534:65534 %s"}
  - tool: execute_command
    become: true
    parameters: {command: "chgrp -R 65534 %s"}
`, e.conf, tree))
	want := [][]string{{e.conf}, {tree}}
	if len(steps) != 2 {
		t.Fatalf("%d steps", len(steps))
	}
	for i, st := range steps {
		if st.Status != "ok" || fmt.Sprint(st.Journaled) != fmt.Sprint(want[i]) {
			t.Errorf("step %d: %s %s %q journaled %q, want %q", st.Step, st.Status, st.Risk, st.Reasons, st.Journaled, want[i])
		}
	}
	checkOwnerMode(t, e.conf, 0o640, 65534, 65534)
	checkOwnerMode(t, filepath.Join(tree, "sub", "f"), 0o600, 0, 65534)
	if _, err := engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, hb); err != nil {
		t.Fatalf("undo through sudo: %v", err)
	}
	checkOwnerMode(t, e.conf, 0o640, 0, 4)
	checkOwnerMode(t, filepath.Join(tree, "sub", "f"), 0o600, 0, 0)
	checkOwnerMode(t, filepath.Join(tree, "sub"), 0o750, 0, 0)
	if got := snapshot(t, e.dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("after undo:\n got %v\nwant %v", got, before)
	}

	// A become step that removes a file of another owner, without chown:
	// undo through sudo (root) puts it back with that owner, not root's.
	nobodys := filepath.Join(e.dir, "nobody.conf")
	must(os.WriteFile(nobodys, []byte("n1\n"), 0o640))
	must(os.Chown(nobodys, 65534, 65534))
	h3, steps3 := run(t, safety.ModeAll, fmt.Sprintf(`steps:
  - tool: execute_command
    become: true
    parameters: {command: "rm -f %s"}
`, nobodys))
	if len(steps3) != 1 || fmt.Sprint(steps3[0].Journaled) != fmt.Sprint([]string{nobodys}) {
		t.Fatalf("rm through become: %+v", steps3)
	}
	if _, err := engine.Undo(ctx, h3.Transport(), stateDir, h3.Session, h3.Name, false, hb); err != nil {
		t.Fatalf("undo of the rm through sudo: %v", err)
	}
	checkOwnerMode(t, nobodys, 0o640, 65534, 65534)

	// The login user's own session: a root-owned file it may write (0666)
	// in a directory of its own. Undo replaces the file, which makes it
	// the login user's, and cannot give it back to root.
	u, err := user.Lookup(e.s.PassUser)
	must(err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	mine, err := os.MkdirTemp("", "agent-owner-undo-")
	must(err)
	t.Cleanup(func() { os.RemoveAll(mine) })
	must(os.Chmod(mine, 0o755))
	must(os.Chown(mine, uid, gid))
	shared := filepath.Join(mine, "shared.conf")
	must(os.WriteFile(shared, []byte("v1\n"), 0o666))
	must(os.Chmod(shared, 0o666))
	h2, steps := run(t, safety.ModeMedium, fmt.Sprintf(`steps:
  - tool: execute_command
    parameters: {command: "echo v2 > %[1]s; chgrp %[2]d %[1]s"}
`, shared, gid))
	if len(steps) != 1 || fmt.Sprint(steps[0].Journaled) != fmt.Sprint([]string{shared}) {
		t.Fatalf("login user's step: %+v", steps)
	}
	if b, _ := os.ReadFile(shared); string(b) != "v2\n" {
		t.Fatalf("the step did not write: %q", b)
	}
	_, err = engine.Undo(ctx, h2.Transport(), stateDir, h2.Session, h2.Name, false, nil)
	var oe *journal.OwnerError
	if !errors.As(err, &oe) || oe.Path != shared || oe.Want != "0:0" {
		t.Fatalf("undo as the login user: %v, want it to say it could not give %s back to 0:0", err, shared)
	}
	if b, _ := os.ReadFile(shared); string(b) != "v1\n" {
		t.Errorf("%s holds %q after undo, want its content back", shared, b)
	}
	t.Logf("undo said: %v", err)
}

// TestUndoKeepsOwnerSSHD: undo replaces a file to put its content back,
// and the transports keep its owner only where they may (root). A
// root-owned file writable by all, written by a login user's session
// without chown, or removed from the user's directory, cannot be given
// back to root by that user's undo: undo says so by name, for both
// (before, each silently became the user's).
func TestUndoKeepsOwnerSSHD(t *testing.T) {
	e := newBecomeEnv(t)
	target, err := engine.HostTarget("web", engine.SSHOverrides{ConfigFile: e.sshConfig, User: e.s.PassUser})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := user.Lookup(e.s.PassUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "agent-owner-keep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := filepath.Join(dir, "shared.conf")
	gone := filepath.Join(dir, "removed.conf")
	for _, err := range []error{os.Chmod(dir, 0o755), os.Chown(dir, uid, gid), os.WriteFile(f, []byte("v1\n"), 0o666), os.Chmod(f, 0o666),
		os.WriteFile(gone, []byte("r1\n"), 0o644)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	h, err := engine.Open(ctx, target, engine.DialOptions{}, engine.HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := h.Executor().RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo v2 > " + f + " && rm -f " + gone}})
	if err != nil || r.Status != "ok" || len(r.Journaled) != 2 {
		t.Fatalf("step: %v %s %v %s", err, r.Status, r.Journaled, r.Observation)
	}
	stateDir, err := statedir.Dir()
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, nil)
	for _, p := range []string{f, gone} {
		if err == nil || !strings.Contains(err.Error(), "could not restore the owner of "+p+" to 0:0") {
			t.Errorf("undo: %v, want it to say it could not give %s back to 0:0", err, p)
		}
	}
	var oe *journal.OwnerError
	if !errors.As(err, &oe) {
		t.Errorf("undo: %v is no OwnerError", err)
	}
	for p, want := range map[string]string{f: "v1\n", gone: "r1\n"} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s holds %q, want %q", p, b, want)
		}
	}
}
