package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

func savedResult() stepgen.Result {
	st := planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "ls"}}
	res := stepgen.Result{Task: "list", Ran: []stepgen.RanStep{{Step: st, Status: execctx.StatusOK}}}
	res.Success = true
	return res
}

func TestSavePlanWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	var w bytes.Buffer
	if err := savePlan(&w, path, savedResult(), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "command: ls") {
		t.Fatalf("%q, %v", b, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("new plan mode %v, want 0600", fi.Mode().Perm())
	}
	if !strings.Contains(w.String(), "plan saved to "+path+" (1 steps)") {
		t.Errorf("note %q", w.String())
	}
	// an existing file keeps its mode; no temporary file is left behind
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := savePlan(&w, path, savedResult(), nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("overwritten plan mode %v, want 0644", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %v", ents)
	}
}

func TestSavePlanRefuses(t *testing.T) {
	dir := t.TempDir()
	var w bytes.Buffer
	// a failed task: nothing written, a note, no error (the exit status is the task's)
	failed := savedResult()
	failed.Success = false
	path := filepath.Join(dir, "failed.yaml")
	if err := savePlan(&w, path, failed, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) || !strings.Contains(w.String(), "not written: the task did not succeed") {
		t.Errorf("failed task: %v, %q", err, w.String())
	}
	for name, tc := range map[string]struct {
		path string
		res  stepgen.Result
		want string
	}{
		"nothing ran":  {filepath.Join(dir, "none.yaml"), stepgen.Result{Summary: executor.Summary{Success: true}}, "no step to save"},
		"no directory": {filepath.Join(dir, "missing", "p.yaml"), savedResult(), "no such file or directory"},
		"a directory":  {dir, savedResult(), "is not a regular file"},
	} {
		err := savePlan(&w, tc.path, tc.res, nil)
		if err == nil || !strings.Contains(err.Error(), "--save-plan") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
