package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/journal"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

// TestShellTreeUndo, on this machine and over real sshd: a directory tree
// a command changed and that changed again since is not overwritten by
// undo without --force (the session's other changes are undone: for mv,
// the tree is back where it was), nothing put in it later is lost; with --force the
// tree comes back as it was. Trees undo could not restore keep the
// command high, with a reason that says why.
func TestShellTreeUndo(t *testing.T) {
	localState(t)
	d, targets := undoTargets(t)
	stateDir, err := statedir.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			newDir := func(t *testing.T) (dir, shown string) {
				dir, err := os.MkdirTemp(tg.base, ".undo-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
				fillUndoDir(t, dir)
				shown = dir
				if rel, ok := strings.CutPrefix(dir, d.Home+"/"); ok && strings.HasPrefix(tg.name, "ssh") {
					shown = "~/" + rel
				}
				return dir, shown
			}
			run := func(t *testing.T, cmd string) (string, string, safety.Assessment, string) {
				t.Helper()
				h, err := engine.Open(ctx, tg.target, engine.DialOptions{}, engine.HostOptions{
					Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: tg.enf})
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				r, err := h.Executor().RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}})
				if err != nil {
					t.Fatal(err)
				}
				return h.Name, h.Session, r.Risk, string(r.Status)
			}
			undo := func(t *testing.T, name, session string, force bool) error {
				t.Helper()
				tr, err := engine.Dial(ctx, tg.target, engine.DialOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				_, err = engine.Undo(ctx, tr, stateDir, session, name, force, nil)
				return err
			}

			for _, tc := range []struct {
				cmd    string
				newer  func(dir string) error
				survey string // a file the newer change made, kept by the refused undo
			}{
				{"rm -r DIR/sub", func(dir string) error {
					if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
						return err
					}
					return os.WriteFile(filepath.Join(dir, "sub", "newer.txt"), []byte("newer\n"), 0o644)
				}, "sub/newer.txt"},
				{"chmod -R 700 DIR/sub", func(dir string) error {
					return os.WriteFile(filepath.Join(dir, "sub", "inner.txt"), []byte("newer\n"), 0o644)
				}, "sub/inner.txt"},
				{"mv DIR/sub DIR/moved", func(dir string) error {
					return os.WriteFile(filepath.Join(dir, "moved", "newer.txt"), []byte("newer\n"), 0o644)
				}, "moved/newer.txt"},
			} {
				t.Run(strings.Fields(tc.cmd)[0], func(t *testing.T) {
					dir, shown := newDir(t)
					before := snapshot(t, dir)
					name, session, risk, status := run(t, strings.ReplaceAll(tc.cmd, "DIR", shown))
					if status != "ok" || risk.Level != safety.Medium {
						t.Fatalf("%s: %s %v", tc.cmd, status, risk)
					}
					if err := tc.newer(dir); err != nil {
						t.Fatal(err)
					}
					err := undo(t, name, session, false)
					if err == nil || !strings.Contains(err.Error(), "changed since session") {
						t.Fatalf("undo over newer work: %v", err)
					}
					if b, err := os.ReadFile(filepath.Join(dir, tc.survey)); err != nil || string(b) != "newer\n" {
						t.Fatalf("newer work lost: %q %v", b, err)
					}
					if err := undo(t, name, session, true); err != nil {
						t.Fatalf("undo --force: %v", err)
					}
					if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
						t.Errorf("after undo --force:\n got %v\nwant %v", got, before)
					}
				})
			}

			// What undo cannot put back keeps the command high, saying why.
			dir, shown := newDir(t)
			big := filepath.Join(dir, "big")
			if err := os.MkdirAll(filepath.Join(big, "many"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range journal.MaxTreeEntries {
				if err := os.WriteFile(filepath.Join(big, "many", fmt.Sprint(i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(filepath.Join(dir, "large"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "large", "f"), make([]byte, journal.DefaultMaxBytes+1), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			for cmd, why := range map[string]string{
				"rm -rf DIR/big":   fmt.Sprintf("holds more than %d entries", journal.MaxTreeEntries),
				"rm -rf DIR/large": "more than the undo journal keeps",
				"rm -rf DIR/fifo":  "is a fifo",
				"rm -rf DIR/hard":  "has 2 hard links",
				"chmod -R 0 DIR":   "holds more than", // the first thing undo could not restore
			} {
				_, _, risk, status := run(t, strings.ReplaceAll(cmd, "DIR", shown))
				if risk.Level != safety.High || status != "denied" || !strings.Contains(risk.String(), why) {
					t.Errorf("%s: %s %v, want high and denied because it %s", cmd, status, risk, why)
				}
			}
			if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("denied commands changed files")
			}
		})
	}
}
