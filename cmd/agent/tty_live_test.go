package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestLiveOutputTerminal: on a terminal, what a running command prints
// shows under its step line before the step ends (here: while it waits
// for a file the test creates only once the first line is on screen), and
// the step's status follows once it has.
func TestLiveOutputTerminal(t *testing.T) {
	srv := testenv.StartLLMServer(t)
	env, _ := ttyEnv(t, srv, "NO_COLOR=1")
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	plan := filepath.Join(dir, "plan.yaml")
	body := "steps:\n  - tool: execute_command\n    parameters:\n      command: echo live-first; " +
		"while [ ! -e " + gate + " ]; do sleep 0.05; done; echo live-second\n"
	if err := os.WriteFile(plan, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTTY(t, env, "run", plan)
	at := s.waitFor(0, `│ live-first`)
	if out := s.output(); strings.Contains(out, "ok (exit") || strings.Contains(out, "│ live-second") {
		t.Fatalf("the step ended before its gate opened:\n%q", out)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s.waitFor(at, `ok \(exit 0`)
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
