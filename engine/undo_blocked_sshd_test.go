package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

// TestUndoBlockedModesSSHD: over real sshd as a user other than root (the
// become tests' user, no become here), a medium chmod -R 000 of a
// directory stops at it (chmod cannot read it after); undo gives the
// tree's directories u+rwx again, top down, and puts every mode back.
// Without that, undo failed with "permission denied".
func TestUndoBlockedModesSSHD(t *testing.T) {
	e := newBecomeEnv(t)
	target, _ := e.passUser(t)
	u, err := user.Lookup(e.s.PassUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, cmd := range []string{"chmod -R 000 DIR/sub", "chmod 000 DIR/sub/inner && chmod 0 DIR/sub"} {
		t.Run(cmd, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "agent-undo-blocked-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			for _, d := range []string{"sub/inner/deep", "sub/empty"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("f\n"), 0o640)
			os.WriteFile(filepath.Join(dir, "sub", "inner", "deep", "g"), []byte("g\n"), 0o600)
			os.Chmod(filepath.Join(dir, "sub", "inner"), 0o750)
			os.Chmod(dir, 0o755)
			err = filepath.Walk(dir, func(p string, _ fs.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, uid, gid)
			})
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			h, err := engine.Open(ctx, target, engine.DialOptions{}, engine.HostOptions{
				Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			r, err := h.Executor().RunStep(ctx, planner.Step{Tool: "execute_command",
				Parameters: map[string]any{"command": strings.ReplaceAll(cmd, "DIR", dir)}})
			if err != nil || r.Risk.Level != safety.Medium || len(r.Journaled) == 0 {
				t.Fatalf("%s: %v %s %s journaled %v: %s", cmd, err, r.Status, r.Risk.Level, r.Journaled, r.Observation)
			}
			if fi, err := os.Stat(filepath.Join(dir, "sub")); err != nil || fi.Mode().Perm() != 0 {
				t.Fatalf("sub was not blocked: %v %v: %s", fi.Mode(), err, r.Observation)
			}
			stateDir, err := statedir.Dir()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := engine.Undo(ctx, h.Transport(), stateDir, h.Session, h.Name, false, nil); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("after undo:\n got %v\nwant %v", got, before)
			}
		})
	}
}
