package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/testenv"
)

// resumeFixture runs agent as a real process (so that it can be killed)
// against the in-process SSH host "vub".
type resumeFixture struct {
	t     *testing.T
	bin   string
	state string // XDG_STATE_HOME/agent
	dir   string // on the host: the counts the plans append to
}

func newResumeFixture(t *testing.T) *resumeFixture {
	t.Helper()
	srv, err := testenv.NewSSHServer(testenv.SSHServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if err := srv.WriteOperatorHome(home, "vub"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	dir := filepath.Join(srv.Home, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &resumeFixture{t: t, bin: agentBinary(t), state: filepath.Join(tmp, "state", "agent"), dir: dir}
}

// start starts agent with args.
func (f *resumeFixture) start(args ...string) (*exec.Cmd, *strings.Builder) {
	f.t.Helper()
	var out strings.Builder
	cmd := exec.Command(f.bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out
}

// run runs agent with args to its end: its output and exit status.
func (f *resumeFixture) run(args ...string) (string, int) {
	f.t.Helper()
	cmd, out := f.start(args...)
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		f.t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// kill SIGKILLs cmd.
func (f *resumeFixture) kill(cmd *exec.Cmd) {
	f.t.Helper()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// waitFile waits until name exists in the work directory.
func (f *resumeFixture) waitFile(name string, out *strings.Builder) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(f.dir, name)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s never appeared; agent said:\n%s", name, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lines is the work file name, line by line.
func (f *resumeFixture) lines(name string) []string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// sessions is agent sessions --json.
func (f *resumeFixture) sessions() []session.Info {
	f.t.Helper()
	out, code := f.run("sessions", "--json")
	var list []session.Info
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		f.t.Fatalf("agent sessions --json: %d\n%s", code, out)
	}
	return list
}

func (f *resumeFixture) writePlan(text string) string {
	f.t.Helper()
	p := filepath.Join(f.t.TempDir(), "plan.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

const gatedPlan = `name: gated
phases:
  - phase: 1
    goal: count
    steps:
      - tool: execute_command
        parameters: {command: "echo s1 >> {{dir}}/count; printf v1"}
        save_output_as: v
      - tool: execute_command
        parameters: {command: "echo s2 >> {{dir}}/count; touch {{dir}}/in2; while [ ! -e {{dir}}/gate ]; do sleep 0.05; done"}
  - phase: 2
    goal: more
    steps:
      - tool: execute_command
        parameters: {command: "echo s3-{{v}} >> {{dir}}/count"}
`

// TestResumeKilledMidStep: agent killed by SIGKILL while step 2 runs.
// agent sessions says interrupted; agent resume shows step 2's outcome as
// unknown and, with nobody to approve running it again, stops there
// (exit 4) running nothing; --rerun-unknown runs it and the rest, with the
// variable step 1 saved; step 1 never runs twice.
func TestResumeKilledMidStep(t *testing.T) {
	f := newResumeFixture(t)
	plan := f.writePlan(gatedPlan)
	cmd, out := f.start("--ssh-host", "vub", "run", plan, "--approve", "all", "--var", "dir="+f.dir)
	f.waitFile("in2", out)
	f.kill(cmd)

	list := f.sessions()
	if len(list) != 1 || list[0].State != session.StateInterrupted || list[0].Hosts.Pending != 1 || list[0].Target != "vub" {
		t.Fatalf("sessions: %+v", list)
	}
	id := list[0].ID
	if text, _ := f.run("sessions"); !strings.Contains(text, id) || !strings.Contains(text, "interrupted") || !strings.Contains(text, "0/0/1") {
		t.Errorf("agent sessions:\n%s", text)
	}
	text, code := f.run("resume")
	if code != exitDenied || !strings.Contains(text, "step 2 (execute_command echo s2") || !strings.Contains(text, "outcome is unknown") {
		t.Errorf("resume without approval: exit %d\n%s", code, text)
	}
	if got := f.lines("count"); strings.Join(got, " ") != "s1 s2" {
		t.Errorf("after the refused resume: %q", got)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text, code = f.run("resume", id, "--rerun-unknown")
	if code != 0 {
		t.Fatalf("resume --rerun-unknown: exit %d\n%s", code, text)
	}
	if got := f.lines("count"); strings.Join(got, " ") != "s1 s2 s2 s3-v1" {
		t.Errorf("count: %q (step 1 once, the unknown step 2 again, step 3 with step 1's variable)", got)
	}
	if list := f.sessions(); list[0].State != session.StateDone || list[0].Resumed != 2 || list[0].Hosts.Done != 1 {
		t.Errorf("after resume: %+v", list[0])
	}
	if text, code := f.run("resume", id); code != exitUsage || !strings.Contains(text, "nothing to resume") {
		t.Errorf("resume of a done session: exit %d\n%s", code, text)
	}
}

// TestResumeKilledBetweenSteps: agent killed when a step has ended and the
// next has not started (it is stopped, the record checked, then killed):
// agent resume needs no approval and runs each remaining step once.
func TestResumeKilledBetweenSteps(t *testing.T) {
	f := newResumeFixture(t)
	var b strings.Builder
	b.WriteString("name: many\nphases:\n  - phase: 1\n    goal: count\n    steps:\n")
	const steps = 30
	for i := 1; i <= steps; i++ {
		b.WriteString("      - tool: execute_command\n        parameters: {command: \"echo s" + itoa(i) + " >> {{dir}}/count\"}\n")
	}
	plan := f.writePlan(b.String())
	cmd, out := f.start("--ssh-host", "vub", "run", plan, "--approve", "all", "--var", "dir="+f.dir)
	killed := 0
	deadline := time.Now().Add(60 * time.Second)
	for killed == 0 {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("never caught agent between two steps; it said:\n%s", out)
		}
		time.Sleep(time.Millisecond)
		if cmd.Process.Signal(syscall.SIGSTOP) != nil {
			t.Fatalf("agent ended first:\n%s", out)
		}
		killed = betweenSteps(f.state)
		if killed == 0 || killed == steps {
			killed = 0
			cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	f.kill(cmd)
	if got := len(f.lines("count")); got != killed {
		t.Fatalf("killed after step %d, but %d ran", killed, got)
	}
	text, code := f.run("resume")
	if code != 0 || strings.Contains(text, "unknown") {
		t.Fatalf("resume: exit %d\n%s", code, text)
	}
	got := f.lines("count")
	if len(got) != steps {
		t.Errorf("%d lines, want %d: %q", len(got), steps, got)
	}
	for i, l := range got {
		if l != "s"+itoa(i+1) {
			t.Fatalf("line %d: %q, want each step once, in order: %q", i+1, l, got)
		}
	}
}

// betweenSteps reads the only session under state: the step that just
// ended when the last record is a step's end, else 0.
func betweenSteps(state string) int {
	ents, _ := os.ReadDir(filepath.Join(state, "sessions"))
	if len(ents) != 1 {
		return 0
	}
	recs, err := session.ReadFile(session.Path(state, ents[0].Name()))
	if err != nil || len(recs) == 0 {
		return 0
	}
	if last := recs[len(recs)-1]; last.R == session.RecStep && last.Status == "ok" {
		return last.Step
	}
	return 0
}

const batchGatedPlan = `name: gated batch
phases:
  - phase: 1
    goal: count
    steps:
      - tool: execute_command
        parameters: {command: "echo s1 >> {{dir}}/{{inventory_hostname}}.count"}
      - tool: execute_command
        parameters: {command: "case {{inventory_hostname}} in db0[6-9]|db10) touch {{dir}}/{{inventory_hostname}}.in2; while [ ! -e {{dir}}/gate ]; do sleep 0.05; done;; esac; echo s2 >> {{dir}}/{{inventory_hostname}}.count"}
      - tool: execute_command
        parameters: {command: "echo s3 >> {{dir}}/{{inventory_hostname}}.count"}
`

// TestResumeBatchKilled: a batch of 10 hosts over real sshd, agent killed
// (SIGKILL) when 5 hosts finished and 5 are in step 2. agent resume
// --rerun-unknown runs only those 5, from step 2: the finished hosts are
// never run again, and no host runs step 1 twice.
func TestResumeBatchKilled(t *testing.T) {
	bf := newBatchFixture(t)
	plan := bf.writeFile("plan.yaml", batchGatedPlan)
	inv := bf.inventory("")
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "agent")
	f := &resumeFixture{t: t, bin: agentBinary(t), state: state, dir: bf.dir}
	cmd, out := f.start("-F", bf.sshConfig, "run", plan, "-i", inv, "--limit", "db", "--forks", "10", "--approve", "all")
	deadline := time.Now().Add(60 * time.Second)
	for {
		done := 0
		ents, _ := os.ReadDir(filepath.Join(state, "sessions"))
		if len(ents) == 1 {
			if s, err := session.Load(state, ents[0].Name()); err == nil {
				done = s.Info.Hosts.Done
			}
		}
		in2, _ := filepath.Glob(filepath.Join(f.dir, "*.in2"))
		if done == 5 && len(in2) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch never got to 5 done and 5 waiting (%d, %d):\n%s", done, len(in2), out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.kill(cmd)
	list := f.sessions()
	if len(list) != 1 || list[0].Hosts != (session.Hosts{Done: 5, Pending: 5}) || list[0].State != session.StateInterrupted {
		t.Fatalf("sessions: %+v", list)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text, code := f.run("resume", "--rerun-unknown")
	if code != 0 || !strings.Contains(text, "5 hosts finished and not run again, 5 to go") {
		t.Fatalf("resume: exit %d\n%s", code, text)
	}
	for i := 1; i <= 10; i++ {
		name := "db" + fmt.Sprintf("%02d", i)
		got := strings.Join(f.lines(name+".count"), " ")
		want := []string{"s1 s2 s3"}
		if i > 5 { // step 2's outcome was unknown: the killed run may have finished it
			want = append(want, "s1 s2 s2 s3")
		}
		if !slices.Contains(want, got) {
			t.Errorf("%s: %q, want one of %q", name, got, want)
		}
	}
	if list := f.sessions(); list[0].Hosts != (session.Hosts{Done: 10}) || list[0].State != session.StateDone {
		t.Errorf("after resume: %+v", list[0])
	}
}

// TestResumeDamagedRecord: a session file cut short resumes from its last
// whole record; one with a damaged line before others is refused with a
// clear error naming the line (exit 2), and nothing runs.
func TestResumeDamagedRecord(t *testing.T) {
	f := newResumeFixture(t)
	plan := f.writePlan(`name: fails
phases:
  - phase: 1
    goal: count
    steps:
      - tool: execute_command
        parameters: {command: "echo s1 >> {{dir}}/count"}
      - tool: execute_command
        parameters: {command: "test -e {{dir}}/gate && echo s2 >> {{dir}}/count"}
`)
	if text, code := f.run("--ssh-host", "vub", "run", plan, "--approve", "all", "--var", "dir="+f.dir); code != exitFailed {
		t.Fatalf("first run: exit %d\n%s", code, text)
	}
	id := f.sessions()[0].ID
	p := session.Path(f.state, id)
	good, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(good), "\n")
	// A middle line damaged: refused.
	bad := slices.Clone(lines)
	bad[2] = `{"r":"step","host":"vub","step":1,"status":` + "\n"
	os.WriteFile(p, []byte(strings.Join(bad, "")), 0o600)
	text, code := f.run("resume", id)
	if code != exitUsage || !strings.Contains(text, "session file damaged: line 3") || strings.Contains(text, "panic") {
		t.Errorf("damaged: exit %d\n%s", code, text)
	}
	// Cut inside step 2's end record (agent killed while writing it):
	// step 2 was running, so its outcome is unknown.
	var cut []string
	for _, l := range lines {
		if strings.Contains(l, `"r":"step","`) && strings.Contains(l, `"step":2`) {
			cut = append(cut, l[:len(l)/2])
			break
		}
		cut = append(cut, l)
	}
	os.WriteFile(p, []byte(strings.Join(cut, "")), 0o600)
	os.WriteFile(filepath.Join(f.dir, "gate"), nil, 0o644)
	if text, code := f.run("resume", "--rerun-unknown"); code != 0 || !strings.Contains(text, "outcome is unknown") {
		t.Fatalf("resume of a cut record: exit %d\n%s", code, text)
	}
	if got := strings.Join(f.lines("count"), " "); got != "s1 s2" {
		t.Errorf("count %q", got)
	}
}
