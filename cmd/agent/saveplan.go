package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/stepgen"
)

// savePlan is --save-plan: it writes the steps of res that ran to path as a
// plan file for `agent run` (stepgen.Result.SavedPlan decides which).
//
// Only a successful task is saved: a plan replays a run's result, and the
// steps of a failed, denied or interrupted run would replay cleanly and
// hide that the task was not done. Then nothing is written (an existing
// file is left alone), a note says so on w and nil is returned, so that the
// exit status stays the task's. A successful run with no step to save is
// an error. The file is written atomically: a reader sees the old file or
// the whole new one; a new file is private (0600), an existing one keeps
// its mode. preset names the variables a replay has before its first step
// (stepgen.Result.SavedPlan).
func savePlan(w io.Writer, path string, res stepgen.Result, preset []string) error {
	if !res.Success {
		fmt.Fprintf(w, "agent: --save-plan: %s not written: the task did not succeed\n", path)
		return nil
	}
	p, err := res.SavedPlan(preset)
	if err != nil {
		return fmt.Errorf("--save-plan %s: %w", path, err)
	}
	data, err := planner.Marshal(p)
	if err != nil {
		return fmt.Errorf("--save-plan %s: %w", path, err)
	}
	// what agent run will read: never write a file it refuses
	if _, err := planner.Parse(bytes.NewReader(data), path); err != nil {
		return fmt.Errorf("--save-plan: the plan would not read back: %w", err)
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("--save-plan: %w", err)
	}
	for _, rs := range res.FailedKept() {
		fmt.Fprintf(w, "agent: --save-plan: kept the failed step %q (%s) that a later step uses, with ignore_errors: true (a replay goes on if it fails again)\n",
			stepLabel(rs.Step), rs.Step.Tool)
	}
	if p.Permissions == nil {
		if why := res.PermissionsGap(); why != "" {
			fmt.Fprintf(w, "agent: --save-plan: no permissions: block written: %s\n", why)
		}
	}
	fmt.Fprintf(w, "agent: plan saved to %s (%d steps); replay it with: agent run %s\n", path, len(p.Steps()), path)
	return nil
}

func stepLabel(st planner.Step) string {
	if st.Description != "" {
		return st.Description
	}
	if c, ok := st.Parameters["command"].(string); ok {
		return c
	}
	if f, ok := st.Parameters["file_path"].(string); ok {
		return f
	}
	return st.Tool
}

// writeAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path.
func writeAtomic(path string, data []byte) (err error) {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
