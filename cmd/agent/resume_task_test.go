package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/testenv"
)

// taskPlan is the planning reply of the resumed tasks: two phases.
func taskPlan() testenv.Reply {
	return testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "command", "complexity": "simple",
		"phases": []map[string]any{
			{"phase": 1, "goal": "first part", "success_criteria": "c1 written"},
			{"phase": 2, "goal": "second part", "success_criteria": "c2 written"},
		}})))
}

// resumedRequest checks what the model is sent when a task is resumed:
// the interruption said, the earlier step in the history, phase 1 done,
// no planning again; then it answers with reply.
func resumedRequest(t *testing.T, reply testenv.Reply) testenv.Reply {
	return testenv.Reply{Func: func(req *testenv.ChatRequest) testenv.Reply {
		sys := string(req.Messages[0].Content)
		for _, want := range []string{"interrupted", "echo c1", "## Phases done", "1. first part", "Phase 1: phase 1 done"} {
			if !strings.Contains(sys, want) {
				t.Errorf("resumed request lacks %q:\n%s", want, sys)
			}
		}
		if user := string(req.Messages[1].Content); !strings.Contains(user, "phase 2: second part") {
			t.Errorf("the resumed request's phase: %s", user)
		}
		if len(req.ToolChoice) > 0 || strings.Contains(sys, "## Planning") { // step requests offer submit_plan too
			t.Error("the resumed task was planned again")
		}
		return reply
	}}
}

// TestResumeTaskKilledDuringModelRequest: agent -c killed (SIGKILL) while
// it waits for the model in phase 2. agent resume goes on with phase 2:
// the plan, phase 1's summary, the step that ran and its variable are
// kept, the model is told of the interruption, and no step runs twice.
func TestResumeTaskKilledDuringModelRequest(t *testing.T) {
	f := newResumeFixture(t)
	count := filepath.Join(f.dir, "count")
	srv := startBatchLLM(t,
		taskPlan(),
		testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "echo c1 >> " + count + "; printf v7", "save_output_as": "v"}))),
		testenv.Text("phase 1 done"),
		testenv.Reply{Delay: time.Minute, Content: "never answered"},
	)
	cmd, out := f.start("--ssh-host", "vub", "--approve", "all", "-c", "write c1 then c2")
	for deadline := time.Now().Add(30 * time.Second); len(srv.Requests()) < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("no 4th model request:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.kill(cmd)
	if list := f.sessions(); list[0].State != session.StateInterrupted || list[0].LLMCalls != 3 || list[0].Tokens() == 0 {
		t.Fatalf("sessions: %+v", list)
	}
	srv.Push(
		resumedRequest(t, testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "echo c2-{{v}} >> " + count})))),
		testenv.Text("phase 2 done"),
	)
	text, code := f.run("resume")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, text)
	}
	if got := strings.Join(f.lines("count"), " "); got != "c1 c2-v7" {
		t.Errorf("count %q", got)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d replies left", srv.Remaining())
	}
	if list := f.sessions(); list[0].State != session.StateDone || list[0].LLMCalls != 5 {
		t.Errorf("after resume: %+v", list[0])
	}
}

// TestResumeTaskEndpointDown: the model endpoint goes down mid-task (503,
// no retries configured): the session failed; once it is back, agent
// resume finishes the task without running phase 1's step again, and the
// session's usage is priced from llm.prices.
func TestResumeTaskEndpointDown(t *testing.T) {
	f := newResumeFixture(t)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "agent", "config.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	if err := os.WriteFile(cfg, []byte("llm:\n  max_retries: 0\n  prices:\n    gpt-4o-mini: {input: 1000, output: 2000}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(f.dir, "count")
	srv := startBatchLLM(t,
		taskPlan(),
		testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "echo c1 >> " + count}))),
		testenv.Text("phase 1 done"),
		testenv.Reply{Status: 503},
	)
	if text, code := f.run("--ssh-host", "vub", "--approve", "all", "-c", "write c1 then c2"); code != exitFailed {
		t.Fatalf("endpoint down: exit %d\n%s", code, text)
	}
	list := f.sessions()
	if list[0].State != session.StateFailed || list[0].Cost == nil || *list[0].Cost <= 0 {
		t.Fatalf("sessions: %+v", list[0])
	}
	srv.Push(
		resumedRequest(t, testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "echo c2 >> " + count})))),
		testenv.Text("phase 2 done"),
	)
	text, code := f.run("resume")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, text)
	}
	if got := strings.Join(f.lines("count"), " "); got != "c1 c2" {
		t.Errorf("count %q", got)
	}
	if !strings.Contains(text, "cost ") {
		t.Errorf("the summary shows no cost:\n%s", text)
	}
}

// TestResumeTaskUnknownStep: agent -c killed while a step runs. The
// resumed model is told that step's outcome is unknown; when it asks for
// the same step again, nobody being there to approve, it is denied with
// the way out (--rerun-unknown) and nothing runs twice.
func TestResumeTaskUnknownStep(t *testing.T) {
	f := newResumeFixture(t)
	count := filepath.Join(f.dir, "count")
	gated := "echo c1 >> " + count + "; touch " + filepath.Join(f.dir, "in2") + "; while [ ! -e " + filepath.Join(f.dir, "gate") + " ]; do sleep 0.05; done"
	again := testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": gated})))
	srv := startBatchLLM(t, taskPlan(), again)
	cmd, out := f.start("--ssh-host", "vub", "--approve", "all", "-c", "write c1 then c2")
	f.waitFile("in2", out)
	f.kill(cmd)
	os.WriteFile(filepath.Join(f.dir, "gate"), nil, 0o644)
	srv.Push(
		testenv.Reply{Func: func(req *testenv.ChatRequest) testenv.Reply {
			if sys := string(req.Messages[0].Content); !strings.Contains(sys, "Step 1 (execute_command: echo c1") || !strings.Contains(sys, "outcome is unknown") {
				t.Errorf("the model is not told of the unknown step:\n%s", sys)
			}
			return again
		}},
		testenv.Reply{Func: func(req *testenv.ChatRequest) testenv.Reply {
			last := string(req.Messages[len(req.Messages)-1].Content)
			if !strings.Contains(last, "denied") || !strings.Contains(last, "--rerun-unknown") {
				t.Errorf("the step's reply: %s", last)
			}
			return testenv.Text("FAILED: the operator must approve running it again")
		}},
	)
	text, code := f.run("resume")
	if code == 0 || !strings.Contains(text, "outcome is unknown") {
		t.Errorf("resume: exit %d\n%s", code, text)
	}
	if got := strings.Join(f.lines("count"), " "); got != "c1" {
		t.Errorf("count %q: the unknown step ran again without approval", got)
	}
}

// TestResumeBatchTaskKilled: agent -i … -c over real sshd, one host at a
// time, killed while the model is asked about the second host's phase 2.
// agent resume leaves the first host alone, takes up the second where it
// stopped (no planning, no step again) and does the third from the start.
func TestResumeBatchTaskKilled(t *testing.T) {
	bf := newBatchFixture(t)
	inv := bf.inventory("")
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "agent")
	f := &resumeFixture{t: t, bin: agentBinary(t), state: state, dir: bf.dir}
	step := func(n string) testenv.Reply {
		return testenv.Calls(testenv.Call("execute_command", args(map[string]any{"command": "echo " + n + " >> {{dir}}/{{inventory_hostname}}.count"})))
	}
	host := []testenv.Reply{taskPlan(), step("c1"), testenv.Text("phase 1 done"), step("c2"), testenv.Text("phase 2 done")}
	script := append(append([]testenv.Reply{}, host...), host[:3]...)
	srv := startBatchLLM(t, append(script, testenv.Reply{Delay: time.Minute, Content: "never answered"})...)
	cmd, out := f.start("-F", bf.sshConfig, "-i", inv, "--limit", "db01:db02:db03", "--forks", "1", "--approve", bf.approve, "-c", "write c1 then c2")
	for deadline := time.Now().Add(60 * time.Second); len(srv.Requests()) < 9; {
		if time.Now().After(deadline) {
			t.Fatalf("no 9th model request:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.kill(cmd)
	if list := f.sessions(); list[0].Hosts != (session.Hosts{Done: 1, Pending: 2}) || list[0].Kind != session.KindBatchTask {
		t.Fatalf("sessions: %+v", list[0])
	}
	srv.Push(append([]testenv.Reply{resumedRequest(t, step("c2")), testenv.Text("phase 2 done")}, host...)...)
	text, code := f.run("resume")
	if code != 0 || !strings.Contains(text, "1 host finished and not run again, 2 to go") {
		t.Fatalf("resume: exit %d\n%s", code, text)
	}
	for _, name := range []string{"db01", "db02", "db03"} {
		if got := strings.Join(f.lines(name+".count"), " "); got != "c1 c2" {
			t.Errorf("%s: %q", name, got)
		}
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d replies left", srv.Remaining())
	}
	if list := f.sessions(); list[0].Hosts != (session.Hosts{Done: 3}) || list[0].State != session.StateDone {
		t.Errorf("after resume: %+v", list[0])
	}
}
