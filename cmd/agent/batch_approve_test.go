package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// approvalPlan has one step that resolves the same on every host and one
// that differs per host; both need approval.
const approvalPlan = `name: approvals
phases:
  - phase: 1
    goal: change files
    steps:
      - tool: execute_command
        parameters:
          command: "touch {{dir}}/shared-flag"
      - tool: write_file
        parameters:
          file_path: "{{dir}}/{{inventory_hostname}}.own"
          content: "mine\n"
`

// TestBatchApprovalsOnTerminal runs a batch on a real terminal (a pty):
// the step that is the same on every host is asked about once and the
// answer applies to all of them; the per-host step is asked about per
// host, and the host whose step is refused fails (exit 3). The progress
// bar is drawn on the terminal.
func TestBatchApprovalsOnTerminal(t *testing.T) {
	f := newBatchFixture(t)
	t.Setenv("CI", "") // a person can answer
	plan := f.writeFile("approvals.yaml", approvalPlan)
	inv := f.inventory("")
	cmd := exec.Command(agentBinary(t), "-F", f.sshConfig, "run", plan, "-i", inv, "--limit", "web", "--forks", "6")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(lockedWriter{&mu, &screen}, tty) // ends with EIO once agent exited
		close(copied)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	question := regexp.MustCompile(`(?s)risk: (\w+) on (\w+)\r?\n.*?Run it\? \[y/N/a=always\] `)
	asked := map[string]int{}
	seen := 0
	var err2 error
	deadline := time.After(60 * time.Second)
loop:
	for {
		select {
		case err2 = <-exited:
			break loop
		case <-deadline:
			cmd.Process.Kill()
			mu.Lock()
			t.Fatalf("agent did not finish; screen:\n%s", screen.String())
		case <-time.After(20 * time.Millisecond):
		}
		mu.Lock()
		text := screen.String()
		mu.Unlock()
		qs := question.FindAllStringSubmatch(text, -1)
		for _, q := range qs[seen:] {
			tool, host := q[1], q[2]
			asked[tool]++
			answer := "y\n"
			if tool == "write_file" && host == "web07" {
				answer = "n\n"
			}
			io.WriteString(tty, answer)
		}
		seen = len(qs)
	}
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Error("the terminal's output did not end")
	}
	mu.Lock()
	text := screen.String()
	mu.Unlock()
	var ee *exec.ExitError
	if !errors.As(err2, &ee) || ee.ExitCode() != exitSomeHosts {
		t.Errorf("exit %v, want %d; screen:\n%s", err2, exitSomeHosts, text)
	}
	if asked["execute_command"] != 1 || asked["write_file"] != 12 {
		t.Errorf("asked %v, want execute_command once and write_file for each of the 12 hosts; screen:\n%s", asked, text)
	}
	// the note on the question, and the progress bar over hosts on stderr
	if !strings.Contains(text, "applies to every host") || !regexp.MustCompile(`hosts +\d+% \|.*\(\d+/12\)`).MatchString(text) {
		t.Errorf("screen:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "shared-flag")); err != nil {
		t.Error(err)
	}
	for i := 1; i <= 12; i++ {
		name := "web" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		_, err := os.Stat(filepath.Join(f.dir, name+".own"))
		if (err == nil) == (name == "web07") {
			t.Errorf("%s.own: %v", name, err)
		}
	}
	if !strings.Contains(text, "12 hosts: 11 ok, 1 failed, 0 not run") {
		t.Errorf("summary; screen:\n%s", text)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
