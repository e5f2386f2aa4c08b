package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
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
	tty := startTTYWith(t, os.Environ(), nil, "-F", f.sshConfig, "run", plan, "-i", inv, "--limit", "web", "--forks", "6")
	question := regexp.MustCompile(`(?s)risk: (\w+) on (\w+)\r?\n.*?Run it\? \[y/N/a=always\] `)
	asked := map[string]int{}
	code := tty.answerUntilExit(question, func(q []string) string {
		tool, host := q[1], q[2]
		asked[tool]++
		if tool == "write_file" && host == "web07" {
			return "n\n"
		}
		return "y\n"
	})
	text := tty.output()
	if code != exitSomeHosts {
		t.Errorf("exit %d, want %d; screen:\n%s", code, exitSomeHosts, text)
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
		// the host lines and the screen's end first: a CI view of a long
		// screen keeps its start and end only
		lines := regexp.MustCompile(`(?m)^.*(\[ ?\d+/12\]|\d+ hosts:).*$`).FindAllString(text, -1)
		t.Errorf("no summary line; host lines:\n%s\nend of screen:\n%q", strings.Join(lines, "\n"), text[max(0, len(text)-1500):])
	}
}

// TestBatchApprovalKey: a batch answer covers another host only for the
// same change: the same edit_file parameters with another diff are asked
// again, and so is a command (it runs in the login's home) on a host
// whose SSH user differs; the same step for the same user is not.
func TestBatchApprovalKey(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	out, err := newBatchOutput(a, "", false, 4)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	p := &batchPrompter{next: safety.PrompterFunc(func(ctx context.Context, r safety.Request) (safety.Decision, error) {
		asked = append(asked, r.Host)
		return safety.Decision{Allowed: true}, nil
	}), out: out}
	ap := safety.NewApprover(safety.ModeAsk, p, safety.WithScope(safety.ScopeBatch),
		safety.WithLogins(map[string]string{"web01": "deploy", "web02": "deploy", "web03": "deploy", "db01": "root"}))
	decide := func(r safety.Request) {
		t.Helper()
		if d, err := ap.Decide(context.Background(), r); err != nil || !d.Allowed {
			t.Fatalf("%s: %+v %v", r.Host, d, err)
		}
	}
	params := map[string]any{"file_path": "/srv/app.conf", "search_pattern": "^listen .*$", "replacement": "listen 8080", "regex": true}
	edit := safety.Request{Host: "web01", Tool: "edit_file", Params: params, Path: "/srv/app.conf",
		Risk: safety.Assessment{Level: safety.Medium}, Diff: "-listen 80\n+listen 8080\n"}
	decide(edit)
	edit.Host = "web02" // the same change: web01's answer
	decide(edit)
	edit.Host, edit.Diff = "web03", "-listen 80\n+listen 8080\n-listen 443 ssl\n+listen 8080\n"
	decide(edit)
	if want := []string{"web01", "web03"}; !slices.Equal(asked, want) {
		t.Errorf("edit: asked on %v, want %v", asked, want)
	}

	asked = nil
	cmd := safety.Request{Tool: "execute_command", Params: map[string]any{"command": "rm -r ~/cache"}, Command: "rm -r ~/cache",
		Risk: safety.Assessment{Level: safety.Medium}}
	for _, h := range []string{"web01", "web02", "db01", "web03"} {
		cmd.Host = h
		decide(cmd)
	}
	if want := []string{"web01", "db01"}; !slices.Equal(asked, want) {
		t.Errorf("command: asked on %v, want %v (once per user)", asked, want)
	}

	asked = nil
	abs := safety.Request{Tool: "write_file", Params: map[string]any{"file_path": "/srv/x", "content": "x"}, Path: "/srv/x",
		Risk: safety.Assessment{Level: safety.Medium}, Diff: "+x\n"}
	for _, h := range []string{"web01", "db01"} {
		abs.Host = h
		decide(abs)
	}
	if want := []string{"web01"}; !slices.Equal(asked, want) {
		t.Errorf("absolute file: asked on %v, want %v", asked, want)
	}
}

// askPlan needs approval on every host.
const askPlan = `name: ask
phases:
  - phase: 1
    goal: x
    steps:
      - tool: execute_command
        parameters:
          command: "touch {{dir}}/{{inventory_hostname}}.flag"
`

// TestBatchQuestionDoesNotBlockDials: while the operator takes their time
// over one host's question, another host's connection goes on: its
// handshake warns (accept-new adds its key to known_hosts) and that
// warning is printed after the answer instead of holding the handshake
// until ConnectTimeout fails the host.
func TestBatchQuestionDoesNotBlockDials(t *testing.T) {
	f := newBatchFixture(t)
	t.Setenv("CI", "") // a person can answer
	p := testenv.StartProxy(t, f.sshd.Addr)
	p.SetDelay(100 * time.Millisecond) // slowb's handshake is still going when web01 asks
	f.prependConfig("Host localhost\n  StrictHostKeyChecking accept-new\n  ConnectTimeout 4\n")
	plan := f.writeFile("ask.yaml", askPlan)
	inv := f.inventory(fmt.Sprintf("\n[slow]\nslowb ansible_host=localhost ansible_port=%d\n", p.Port))
	tty := startTTYWith(t, os.Environ(), nil, "-F", f.sshConfig, "run", plan, "-i", inv, "--limit", "web01:slowb", "--forks", "2")
	question := regexp.MustCompile(`(?s)risk: \w+ on (\w+)\r?\n.*?Run it\? \[y/N/a=always\] `)
	seen := 0
	var first time.Time
	code := tty.answerUntilExit(question, func([]string) string {
		if first.IsZero() {
			first = time.Now()
		}
		// The first question waits longer than slowb's ConnectTimeout.
		if seen == 0 && time.Since(first) < 6*time.Second {
			return ""
		}
		seen++
		return "y\n"
	})
	text := tty.output()
	if code != 0 {
		t.Errorf("exit %d; screen:\n%s", code, text)
	}
	if seen != 2 || !strings.Contains(text, "2 hosts: 2 ok, 0 failed") {
		t.Errorf("%d questions answered; screen:\n%s", seen, text)
	}
	for _, h := range []string{"web01", "slowb"} {
		if _, err := os.Stat(filepath.Join(f.dir, h+".flag")); err != nil {
			t.Error(err)
		}
	}
}
