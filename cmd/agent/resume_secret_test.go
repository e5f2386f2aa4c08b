package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/session"
)

// TestResumeSecretVar: a secret --var never reaches the session record
// (nor the step output it appeared in); agent resume asks for it again
// and, given, runs the rest with the real value.
func TestResumeSecretVar(t *testing.T) {
	f := newResumeFixture(t)
	const secret = "hunter2-Zq9xPw"
	plan := f.writePlan(`name: secret
phases:
  - phase: 1
    goal: use it
    steps:
      - tool: execute_command
        parameters: {command: "echo {{db_password}}; echo s1 >> {{dir}}/count"}
        save_output_as: out
      - tool: execute_command
        parameters: {command: "test -e {{dir}}/gate && echo s2-{{db_password}} >> {{dir}}/count"}
`)
	if text, code := f.run("--ssh-host", "vub", "run", plan, "--approve", "all", "--var", "dir="+f.dir, "--var", "db_password="+secret); code != exitFailed {
		t.Fatalf("first run: exit %d\n%s", code, text)
	}
	id := f.sessions()[0].ID
	b, err := os.ReadFile(session.Path(f.state, id))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), `"redacted":["db_password"]`) {
		t.Fatalf("session record:\n%s", b)
	}
	os.WriteFile(filepath.Join(f.dir, "gate"), nil, 0o644)
	if text, code := f.run("resume"); code != exitUsage || !strings.Contains(text, "agent resume --var db_password=") {
		t.Errorf("resume without the secret: exit %d\n%s", code, text)
	}
	if text, code := f.run("resume", "--var", "other=1"); code != exitUsage || !strings.Contains(text, "db_password") {
		t.Errorf("resume with another --var: exit %d\n%s", code, text)
	}
	text, code := f.run("resume", "--var", "db_password="+secret)
	if code != 0 || strings.Contains(text, secret) {
		t.Fatalf("resume: exit %d\n%s", code, text)
	}
	if got := strings.Join(f.lines("count"), " "); got != "s1 s2-"+secret {
		t.Errorf("count %q", got)
	}
	if b, _ := os.ReadFile(session.Path(f.state, id)); strings.Contains(string(b), secret) {
		t.Errorf("the resumed run put the secret in the record")
	}
}
