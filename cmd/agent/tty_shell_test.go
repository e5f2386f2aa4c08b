package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestREPLShellPassthrough drives `!command` in the REPL on a real
// terminal: the output shown as it comes and the exit status; a non-zero
// exit; a medium-risk command asking for approval and refused (nothing
// ran); Ctrl-C killing a running command with the REPL still there; the
// audit log holding each; and the next task's model told the command and
// what it printed.
func TestREPLShellPassthrough(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Text("The file holds passthrough-marker."))
	env, home := ttyEnv(t, srv, "NO_COLOR=1")
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("line one\npassthrough-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTTY(t, env, "--mode", "react")
	at := s.waitFor(0, `Agent > `)

	s.send("!cat ~/notes.txt\r")
	at = s.waitFor(at, `execute_command: cat ~/notes.txt`)
	at = s.waitFor(at, `│ line one\r?\n.*│ passthrough-marker`)
	at = s.waitFor(at, `ok \(exit 0, \d+ ms\)`)
	at = s.waitFor(at, `Agent > `)

	s.send("!sh -c 'echo to-stderr >&2; exit 3'\r")
	at = s.waitFor(at, `FAILED \(.*exit 3, \d+ ms\)`)
	at = s.waitFor(at, `Agent > `)

	// A write asks; n refuses it and nothing is written.
	s.send("!touch ~/made-by-bang\r")
	at = s.waitFor(at, `MEDIUM risk: execute_command`)
	at = s.waitFor(at, `Run it\? \[y/N/a=always\] `)
	s.send("n\r")
	at = s.waitFor(at, `DENIED`)
	at = s.waitFor(at, `Agent > `)
	if _, err := os.Stat(filepath.Join(home, "made-by-bang")); err == nil {
		t.Error("a refused ! command ran")
	}

	s.send("!\r")
	at = s.waitFor(at, `'!' runs a command on the target without the model`)

	// Ctrl-C kills a running command; the REPL stays.
	s.send("!sleep 41\r")
	at = s.waitFor(at, `Executing…`)
	s.send("\x03")
	at = s.waitFor(at, `command interrupted`)
	at = s.waitFor(at, `Agent > `)
	if out, err := exec.Command("pgrep", "-fx", "sleep 41").Output(); err == nil {
		t.Errorf("sleep 41 still runs after Ctrl-C: pid %s", out)
	}

	// The next task's model is told what the command showed.
	s.send("what did the notes say\r")
	at = s.waitFor(at, `passthrough-marker\.`)
	s.waitFor(at, `Agent > `)
	s.send("exit\r")
	if code := s.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if !strings.Contains(s.output(), "1 task and 4 commands this session") {
		t.Error("the session's total does not count the ! commands apart")
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1 (a ! line must not ask the model)", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, want := range []string{`ran the command \"cat ~/notes.txt\"`, "exit 0", "passthrough-marker", `exit 3`, "to-stderr"} {
		if !strings.Contains(body, want) {
			t.Errorf("the model was not told %q: %s", want, body)
		}
	}
	srv.CheckNoRejections(t)

	// Each ! command is in the audit log, the refused one as denied.
	f, err := os.Open(filepath.Join(home, "state", "agent", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if p, ok := l["parameters"].(map[string]any); ok {
			if c, ok := p["command"].(string); ok {
				d, _ := l["decision"].(string)
				seen[c] = d + fmt.Sprintf(" exit=%v", l["exit_code"])
			}
		}
	}
	for cmd, want := range map[string]string{"cat ~/notes.txt": "exit=0", "touch ~/made-by-bang": "denied exit=<nil>"} {
		if !strings.HasSuffix(seen[cmd], want) {
			t.Errorf("audit log: %q is %q, want …%q (all: %v)", cmd, seen[cmd], want, seen)
		}
	}
}

// TestParseREPLLinePassthrough: only '!' passes a line to the shell; lines
// that are exactly a command, or look like one, are tasks for the model.
func TestParseREPLLinePassthrough(t *testing.T) {
	for _, tc := range []struct {
		line string
		act  replAction
		text string
	}{
		{"!ls -la", replShell, "ls -la"},
		{"  ! df -h  ", replShell, "df -h"},
		{"!", replShell, ""},
		{"!!", replShell, "!"},
		{"ls", replTask, "ls"},
		{"reboot", replTask, "reboot"},
		{"uptime", replTask, "uptime"},
		{"free -m", replTask, "free -m"},
		{"restart nginx", replTask, "restart nginx"},
		{"rm -rf /tmp/x", replTask, "rm -rf /tmp/x"},
		{"why is !this slow", replTask, "why is !this slow"},
	} {
		act, text := parseREPLLine(tc.line)
		if act != tc.act || text != tc.text {
			t.Errorf("parseREPLLine(%q) = %v %q, want %v %q", tc.line, act, text, tc.act, tc.text)
		}
	}
}
