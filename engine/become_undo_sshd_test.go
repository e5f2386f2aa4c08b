package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

// TestBecomeShellDirsAndTreesUndoSSHD: over real sshd as a user whose
// sudo wants a password, approved become steps create directories with
// mkdir -p and remove a directory tree with rm -r in a directory under
// /root the login user cannot enter (high: a system path): both are
// journaled through sudo (RecordDir and RecordTree with "as": root), and
// undo through sudo removes the directories and puts the tree back.
func TestBecomeShellDirsAndTreesUndoSSHD(t *testing.T) {
	e := newBecomeEnv(t)
	tree := filepath.Join(e.dir, "tree")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(tree, "sub"), 0o750))
	must(os.WriteFile(filepath.Join(tree, "sub", "f"), []byte("root's\n"), 0o600))
	must(os.Symlink("sub/f", filepath.Join(tree, "l")))
	before := snapshot(t, e.dir)

	target, hb := e.passUser(t)
	var log eventLog
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := engine.Open(ctx, target, engine.DialOptions{}, engine.HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil), Emit: log.Emit, Become: hb,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	plan, err := planner.Parse(strings.NewReader(fmt.Sprintf(`steps:
  - tool: execute_command
    become: true
    parameters: {command: "mkdir -p %[1]s/new/a/b && echo x > %[1]s/new/a/b/f"}
  - tool: execute_command
    become: true
    parameters: {command: "rm -r %[1]s/tree"}
`, e.dir)), "become.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := h.RunPlan(ctx, plan)
	evs := log.all()
	if err != nil || !sum.Success {
		t.Fatalf("RunPlan: %+v %v\n%s", sum, err, dump(evs))
	}
	var steps []*event.Step
	for _, ev := range evs {
		if ev.Kind == event.KindStep {
			steps = append(steps, ev.Step)
		}
	}
	if len(steps) != 2 {
		t.Fatalf("%d step events\n%s", len(steps), dump(evs))
	}
	wantJournaled := [][]string{
		{e.dir + "/new", e.dir + "/new/a", e.dir + "/new/a/b", e.dir + "/new/a/b/f"},
		{tree},
	}
	for i, st := range steps {
		if st.As != "root" || st.Status != "ok" || fmt.Sprint(st.Journaled) != fmt.Sprint(wantJournaled[i]) {
			t.Errorf("step %d: as %q status %s risk %s %q journaled %q, want %q", st.Step, st.As, st.Status, st.Risk, st.Reasons, st.Journaled, wantJournaled[i])
		}
	}
	if _, err := os.Stat(tree); !os.IsNotExist(err) {
		t.Fatalf("rm -r did not run: %v", err)
	}

	stateDir, err := statedir.Dir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, nil); err == nil {
		t.Error("undo through sudo -n (no password) succeeded where sudo wants one")
	}
	acts, err := engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, hb)
	if err != nil {
		t.Fatalf("Undo = %v, %v", acts, err)
	}
	if got := snapshot(t, e.dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("after undo through sudo:\n got %v\nwant %v", got, before)
	}
	// The undo's audit line says whom the files were put back as.
	for _, a := range acts {
		if a.As != "root" {
			t.Errorf("undo action %s: as %q, want root", a, a.As)
		}
	}
	auditPath, err := statedir.AuditPath()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"tool":"undo"`) || !strings.Contains(last, `"as":"root"`) {
		t.Errorf("the undo's audit line does not say it ran as root: %s", last)
	}
	checkOwnerMode(t, filepath.Join(tree, "sub", "f"), 0o600, 0, 0)
}
