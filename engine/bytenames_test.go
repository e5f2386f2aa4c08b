package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// TestNameNotUTF8: a file whose name is not UTF-8 is shown with \xHH,
// and a file tool given that name reads and writes the real file; the
// journal keeps the name exactly, so agent undo restores it.
func TestNameNotUTF8(t *testing.T) {
	localState(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "bad\xffname.txt")
	if err := os.WriteFile(name, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	shown := filepath.Join(dir, `bad\xffname.txt`)
	o := engine.HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil), Session: "bytes-" + filepath.Base(dir)}
	steps, _ := run(t, open, o,
		shellStep("ls "+dir),
		planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": shown, "content": "after\n"}},
		planner.Step{Tool: "read_file", Parameters: map[string]any{"file_path": shown}})
	if len(steps) != 3 || !strings.Contains(steps[0].Output, `bad\xffname.txt`) || steps[1].Status != "ok" || steps[2].Output != "after\n" {
		t.Fatalf("steps: %s", show(steps))
	}
	if b, _ := os.ReadFile(name); string(b) != "after\n" {
		t.Fatalf("the real file holds %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 1 {
		t.Fatalf("files in the directory: %q (a U+FFFD twin?)", left)
	}
	undoSession(t, open, o)
	if b, _ := os.ReadFile(name); string(b) != "before\n" {
		t.Errorf("after undo the file holds %q", b)
	}
}
