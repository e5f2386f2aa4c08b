package main

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestREPLAlwaysPerTask: in the REPL an "a=always" answer holds for the
// rest of that task only; the next task asks again for the same step.
func TestREPLAlwaysPerTask(t *testing.T) {
	write := testenv.ToolCall{Name: "execute_command", Arguments: `{"command":"touch ~/always.txt"}`}
	srv := testenv.StartLLMServer(t,
		testenv.Calls(write),
		testenv.Calls(write),
		testenv.Text("Wrote it twice."),
		testenv.Calls(write),
		testenv.Text("Tried again."),
	)
	env, _ := ttyEnv(t, srv, "NO_COLOR=1")
	s := startTTY(t, env, "--mode", "react")
	at := s.waitFor(0, `Agent > `)
	s.send("write it twice\r")
	at = s.waitFor(at, `Run it\? \[y/N/a=always\] `)
	s.send("a\r")
	at = s.waitFor(at, `→ Wrote it twice\.`)
	first := s.output()[:at]
	if n := strings.Count(first, "Run it?"); n != 1 {
		t.Errorf("asked %d times in the first task, want once (a=always)", n)
	}
	s.send("write it again\r")
	at = s.waitFor(at, `Run it\? \[y/N/a=always\] `) // asked again: a new task
	s.send("n\r")
	at = s.waitFor(at, `→ Tried again\.`)
	s.waitFor(at, `Agent > `)
	s.send("exit\r")
	if code := s.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}
