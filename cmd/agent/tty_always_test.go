package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestNoSpinnerStdoutRedirected: stderr is a terminal but stdout goes to a
// file: no spinner (its redraws would garble the terminal), and the file
// holds the plain view.
func TestNoSpinnerStdoutRedirected(t *testing.T) {
	srv := testenv.StartLLMServer(t,
		testenv.Reply{ToolCalls: []testenv.ToolCall{{Name: "execute_command", Arguments: `{"command":"sleep 0.3; echo redirected-hello"}`}}, Delay: 300 * time.Millisecond},
		testenv.Reply{Content: "Done.", Delay: 300 * time.Millisecond},
	)
	env, _ := ttyEnv(t, srv, "NO_COLOR=1")
	f, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := startTTYWith(t, env, f, "--mode", "react", "-c", "say hello")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	if out := s.output(); spinnerGlyph.MatchString(out) || strings.Contains(out, "Thinking") || strings.Contains(out, "Executing") {
		t.Errorf("spinner on the terminal with stdout redirected: %q", out)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil || !strings.Contains(string(b), "redirected-hello") || strings.Contains(string(b), "\r") {
		t.Errorf("stdout file: %q %v", b, err)
	}
}

// TestSetLLMKeyStdinTerminal: --key-stdin with stdin a terminal reads the
// key without echo.
func TestSetLLMKeyStdinTerminal(t *testing.T) {
	const key = "sk-key-stdin-at-terminal-0123456789"
	srv := testenv.StartLLMServer(t)
	env, home := ttyEnv(t, srv)
	s := startTTY(t, env, "config", "set-llm", "--provider", "generic", "--base-url", srv.URL, "--model", "m", "--key-stdin", "--no-test")
	at := s.waitFor(0, `API key \(input hidden\): `)
	s.send(key + "\n")
	s.waitFor(at, `✓ Configuration saved to `)
	if code := s.exit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	if strings.Contains(s.output(), "stdin-at-terminal") {
		t.Errorf("the key was echoed: %q", s.output())
	}
	b, err := os.ReadFile(filepath.Join(home, "config", "agent", "config.yaml"))
	if err != nil || !strings.Contains(string(b), "api_key: "+key) {
		t.Errorf("config: %q %v", b, err)
	}
}
