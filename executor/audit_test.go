package executor

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// TestAuditStartLineBeforeRun: an allowed step's line (what will run,
// approved how) is written before it runs, its result after; both carry
// the resolved command and the principal, and the log verifies.
func TestAuditStartLineBeforeRun(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeAll, false, nil)
	target := filepath.Join(h.dir, "made")
	ctx := audit.WithPrincipal(context.Background(), "tester via mcp c/1")
	if _, err := e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "touch " + target}}); err != nil {
		t.Fatal(err)
	}
	ls := h.allAuditLines()
	if len(ls) != 2 || ls[0]["decision"] != audit.Started || ls[1]["decision"] != audit.Allowed {
		t.Fatalf("lines %v", ls)
	}
	for _, l := range ls {
		if l["command"] != "touch "+target || l["principal"] != "tester via mcp c/1" || !strings.Contains(l["approval"].(string), "--approve all") {
			t.Errorf("line %v", l)
		}
	}
	if _, ok := ls[1]["exit_code"]; !ok {
		t.Errorf("result line without exit code: %v", ls[1])
	}
	if _, err := audit.Verify(filepath.Join(h.state, "audit.log")); err != nil {
		t.Error(err)
	}
}

// TestAuditFailsClosed: with the audit log on a full disk (/dev/full), an
// approved command does not run and the step says why.
func TestAuditFailsClosed(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	h := newHarness(t)
	full := filepath.Join(t.TempDir(), "audit.log")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	a, err := audit.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h.audit = a
	e := h.executor(safety.ModeAll, false, nil)
	target := filepath.Join(h.dir, "must-not-exist")
	r, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "touch " + target}})
	if err == nil || !strings.Contains(err.Error(), "not run") {
		t.Errorf("RunStep error: %v", err)
	}
	if !strings.Contains(r.Observation, "audit log cannot record this step") {
		t.Errorf("observation %q", r.Observation)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the step ran without its audit line")
	}
	w := filepath.Join(h.dir, "w.txt")
	if _, err := e.RunStep(context.Background(), planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": w, "content": "x"}}); err == nil {
		t.Error("write_file ran without its audit line")
	}
	if _, err := os.Stat(w); err == nil {
		t.Fatal("write_file wrote without its audit line")
	}
}

// TestAuditBytesChanged: a file tool's result line says how many bytes it
// wrote; a command's line does not guess.
func TestAuditBytesChanged(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeAll, false, nil)
	w := filepath.Join(h.dir, "w.txt")
	if _, err := e.RunStep(context.Background(), planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": w, "content": "hello, audit\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.RunStep(context.Background(), planner.Step{Tool: "edit_file", Parameters: map[string]any{"file_path": w, "search_pattern": "audit", "replacement": "auditor"}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"true",                   // no file: no figure
		"echo 0123456789 > " + w, // a journaled file rewritten: its new size
		"echo abc >> " + w,       // appended: the new size
		"echo new > " + filepath.Join(h.dir, "n"), // created
		"cat " + w + " > " + w + ".copy; rm " + w, // one created, one removed (0)
		"cat " + w + ".copy > " + w + ".copy",     // truncated to nothing by the shell: 0
	} {
		if _, err := e.RunStep(context.Background(), planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}}); err != nil {
			t.Fatal(err)
		}
	}
	var got []any
	for _, l := range h.allAuditLines() {
		if l["decision"] == audit.Allowed {
			got = append(got, l["bytes_changed"])
		}
	}
	if want := []any{float64(len("hello, audit\n")), float64(len("hello, auditor\n")), nil, float64(11), float64(15), float64(4), float64(15), float64(0)}; !reflect.DeepEqual(got, want) {
		t.Errorf("bytes_changed %v, want %v", got, want)
	}
}
