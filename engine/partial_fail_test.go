package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
)

// partialFailure runs `rm -rf ~/dir` at --approve medium: the kernel lets
// the step delete what is in ~/dir but not ~/dir itself (a name directly
// in ~). The step fails, and its observation says what it deleted before
// it failed, as the journal saw it; agent undo puts it all back.
func partialFailure(t *testing.T, home string, open hostOpener, e engine.Enforcement) {
	t.Helper()
	for _, f := range []string{"dir/a", "dir/sub/b"} {
		p := filepath.Join(home, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := newAttackBed(t, t.TempDir())
	o := engine.HostOptions{Policy: b.policy(safety.Medium), Approver: safety.NewApprover(safety.ModeMedium, nil),
		Enforcement: e, Session: "partial-" + filepath.Base(t.TempDir())}
	steps, _ := run(t, open, o, shellStep("rm -rf ~/dir"))
	want := "[before it failed, the command removed 3 of the 3 entries in " + filepath.Join(home, "dir") + " (a, sub, sub/b)"
	if len(steps) != 1 || steps[0].Status != "error" || !strings.Contains(steps[0].Output, want) {
		t.Fatalf("the failed step's observation does not say what it removed (want %q): %s", want, show(steps))
	}
	if _, err := os.Stat(filepath.Join(home, "dir", "a")); err == nil {
		t.Fatal("~/dir/a is still there: the step was meant to delete it before failing")
	}
	undoSession(t, open, o)
	for _, f := range []string{"dir/a", "dir/sub/b"} {
		if got, _ := os.ReadFile(filepath.Join(home, f)); string(got) != f+"\n" {
			t.Errorf("after undo ~/%s = %q", f, got)
		}
	}
	// A command that failed without changing anything says nothing more.
	steps, _ = run(t, open, o, shellStep("rm ~/dir/missing"))
	if len(steps) != 1 || steps[0].Status != "error" || strings.Contains(steps[0].Output, "before it failed") {
		t.Errorf("a failure that changed nothing: %s", show(steps))
	}
}

func TestPartialFailureSaysWhatChangedLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := tempHome(t)
	partialFailure(t, home, localHomeOpener(t, home), engine.Enforcement{})
}

func TestPartialFailureSaysWhatChangedSSHD(t *testing.T) {
	needLandlock(t)
	home := tempHome(t)
	open, e := sshdHomeOpener(t, home)
	partialFailure(t, home, open, e)
}
