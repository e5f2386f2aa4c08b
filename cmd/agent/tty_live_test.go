package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// ttyLiveSecret is a secret of agent's environment (its name says so)
// that TestLiveOutputTerminal's command prints folded over lines.
const ttyLiveSecret = "TtyLiveTok-7Q2m9Xa4Kd"

// TestLiveOutputTerminal: on a terminal, what a running command prints
// shows under its step line before the step ends (here: while it waits
// for a file the test creates only once the first line is on screen), and
// the step's status follows once it has. The last lines of a running
// command's output are held until more comes or the step ends
// (engine/stream.go): the command prints more than that after its first
// line. Before it waits, it prints a secret of agent's environment
// folded over lines, one line at a time: the terminal shows it hidden
// (each line redacted on its own, it showed).
func TestLiveOutputTerminal(t *testing.T) {
	srv := testenv.StartLLMServer(t)
	env, _ := ttyEnv(t, srv, "NO_COLOR=1", "TTY_LIVE_TOKEN="+ttyLiveSecret)
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	plan := filepath.Join(dir, "plan.yaml")
	// after live-first, four lines of 1,000 bytes: more than is held, and
	// live-first still among the lines the terminal shows (the last 5)
	body := "steps:\n  - tool: execute_command\n    parameters:\n      command: echo live-first; " +
		"for i in 1 2 3 4; do printf 'pad%01000d\\n' $i; done; " +
		"fold -w3 " + filepath.Join(dir, "tok") + " | while read -r l; do echo \"$l\"; sleep 0.05; done; " +
		"while [ ! -e " + gate + " ]; do sleep 0.05; done; echo live-second\n"
	if err := os.WriteFile(plan, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok"), []byte(ttyLiveSecret+"\n"), 0o600); err != nil {
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
	// the output lines the terminal drew, each once, in the order first
	// drawn: the folded secret's lines in a row
	var shown []string
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`│ ([^\r\n]*)`).FindAllStringSubmatch(s.output(), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			shown = append(shown, m[1])
		}
	}
	if how := leakHow(strings.Join(shown, "\n"), ttyLiveSecret); how != "" {
		t.Errorf("the terminal shows the secret (%s):\n%q", how, shown)
	}
}
