package engine_test

// The acceptance tests of the engine package: a front end's work — a plan
// on inventory hosts over a real OpenSSH sshd, a task with the model on
// one host, secrets kept out of events — done through engine's exported
// API alone, without cmd/agent.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
)

// eventLog collects the events of a run; its Emit may be called from
// several goroutines.
type eventLog struct {
	mu     sync.Mutex
	events []event.Event
}

func (l *eventLog) Emit(ev event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *eventLog) all() []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event.Event(nil), l.events...)
}

// dump is the events as JSON lines, for failure messages.
func dump(evs []event.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		j, err := json.Marshal(ev)
		if err != nil {
			fmt.Fprintf(&b, "%s (%v)\n", ev.Kind, err)
			continue
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeFile writes a file in the test's temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// localState keeps the undo journal, the audit log and any config the
// test's runs open out of the real home.
func localState(t *testing.T) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
}

// sshdPlan writes each host's name into its own file under DIR, reads it
// back, checks it, and runs a step only when the check said yes.
const sshdPlan = `name: name each host
phases:
  - phase: 1
    goal: write the host's name into its file
    steps:
      - tool: execute_command
        parameters:
          command: "echo {{inventory_hostname}} > DIR/{{inventory_hostname}}.txt && cat DIR/{{inventory_hostname}}.txt"
        save_output_as: written
  - phase: 2
    goal: check it
    steps:
      - tool: check_condition
        parameters:
          condition: "written.strip() == inventory_hostname"
        save_output_as: matched
      - tool: execute_command
        condition: "matched"
        parameters:
          command: "echo checked {{inventory_hostname}}"
`

// TestEngineBatchPlanSSHD runs a plan on 10 inventory hosts (aliases of
// one real OpenSSH sshd), 4 at a time, through engine alone: every host
// writes its own file from its own variables, every host's events carry
// its name and end with its done event then its result, and the batch
// event comes last.
func TestEngineBatchPlanSSHD(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "MaxStartups 200\nMaxSessions 50\n"})
	dir, err := os.MkdirTemp(d.Home, ".agent-engine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	kh, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := writeFile(t, "known_hosts", string(kh))
	sshConfig := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host *\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 10\n",
		d.User, d.IdentityFile, knownHosts))
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)

	var names []string
	var inv strings.Builder
	inv.WriteString("[web]\n")
	for i := 1; i <= 10; i++ {
		name := fmt.Sprintf("web%02d", i)
		names = append(names, name)
		fmt.Fprintf(&inv, "%s ansible_host=127.0.0.1 ansible_port=%d\n", name, d.Port)
	}
	invFile := writeFile(t, "hosts.ini", inv.String())

	hosts, err := engine.SelectHosts(engine.InventorySpec{Sources: []string{invFile}}, "", engine.SSHOverrides{ConfigFile: sshConfig})
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != len(names) {
		t.Fatalf("%d hosts selected, want %d", len(hosts), len(names))
	}
	var log eventLog
	policy := safety.DefaultPolicy()
	b, err := engine.OpenBatch(engine.BatchOptions{
		Hosts: hosts, Forks: 4, Policy: policy,
		Approver: safety.NewApprover(safety.ModeAll, nil, safety.WithScope(safety.ScopeBatch)),
		Emit:     log.Emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	plan, err := planner.Parse(strings.NewReader(strings.ReplaceAll(sshdPlan, "DIR", dir)), "plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := planner.Validate(plan, tools.Default(policy), b.PresetVars()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := b.RunPlan(ctx, plan)
	evs := log.all()

	if res.Session != b.Session() || len(res.Hosts) != len(names) {
		t.Fatalf("result: session %q (batch %q), %d hosts", res.Session, b.Session(), len(res.Hosts))
	}
	for i, hr := range res.Hosts {
		if hr.Host != names[i] || hr.Status != event.HostOK || hr.How != "plan" || hr.Steps != 3 || hr.Err != "" {
			t.Errorf("host %d: %+v", i, hr)
		}
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name+".txt"))
		if err != nil || string(b) != name+"\n" {
			t.Errorf("%s.txt: %q (%v), want %q", name, b, err, name+"\n")
		}
	}

	// Each host's events, in order.
	per := map[string][]event.Event{}
	for i, ev := range evs {
		if ev.Kind == event.KindBatch {
			if i != len(evs)-1 {
				t.Errorf("batch event %d of %d: not the last", i+1, len(evs))
			}
			continue
		}
		if ev.Host == "" {
			t.Errorf("event %d (%s) without a host", i, ev.Kind)
			continue
		}
		per[ev.Host] = append(per[ev.Host], ev)
	}
	if len(per) != len(names) {
		t.Errorf("events of %d hosts, want %d", len(per), len(names))
	}
	for _, name := range names {
		hevs := per[name]
		n := len(hevs)
		if n < 2 || hevs[n-2].Kind != event.KindDone || hevs[n-1].Kind != event.KindHost {
			t.Errorf("%s: events do not end with done then host:\n%s", name, dump(hevs))
			continue
		}
		if d := hevs[n-2].Done; d.Status != "success" || d.Steps != 3 || d.OK != 3 {
			t.Errorf("%s: done %+v", name, d)
		}
		if he := hevs[n-1].HostEnd; he.Status != event.HostOK || he.Steps != 3 {
			t.Errorf("%s: host event %+v", name, he)
		}
		var steps []*event.Step
		for _, ev := range hevs {
			if ev.Session != b.Session() {
				t.Errorf("%s: %s event in session %q, want %q", name, ev.Kind, ev.Session, b.Session())
			}
			if ev.Kind == event.KindStep {
				steps = append(steps, ev.Step)
			}
		}
		if len(steps) != 3 {
			t.Errorf("%s: %d step events, want 3:\n%s", name, len(steps), dump(hevs))
			continue
		}
		if s := steps[0]; s.Status != "ok" || s.Output != name+"\n" || s.Command != fmt.Sprintf("echo %s > %s/%s.txt && cat %s/%s.txt", name, dir, name, dir, name) {
			t.Errorf("%s: first step %+v", name, s)
		}
		if s := steps[1]; s.Tool != tools.CheckConditionName || s.Status != "ok" || s.SavedAs != "matched" {
			t.Errorf("%s: check step %+v", name, s)
		}
		if s := steps[2]; s.Status != "ok" || s.Output != "checked "+name+"\n" {
			t.Errorf("%s: last step %+v (the check said no?)", name, s)
		}
	}
	last := evs[len(evs)-1]
	if last.Kind != event.KindBatch {
		t.Fatalf("last event %s, want batch", last.Kind)
	}
	if bt := last.Batch; bt.Hosts != 10 || bt.OK != 10 || bt.Failed != 0 || bt.NotRun != 0 || last.Session != b.Session() {
		t.Errorf("batch event %+v (session %q)", bt, last.Session)
	}
}

// TestEngineTaskScriptedModel does a task with the (scripted) model on
// this machine through engine.Open and Host.RunTask: a plan of one phase,
// one step, a closing text.
func TestEngineTaskScriptedModel(t *testing.T) {
	localState(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	srv, err := testenv.NewLLMServer(
		testenv.Calls(testenv.Call("submit_plan", `{"task_type":"command","complexity":"simple","phases":[{"phase":1,"goal":"write the file","success_criteria":"it holds ran"}]}`)),
		testenv.Calls(testenv.Call("execute_command", fmt.Sprintf(`{"command":"echo ran > %s && cat %s","save_output_as":"result"}`, out, out))),
		testenv.Text("The file holds ran."),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log eventLog
	h, err := engine.Open(ctx, engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, engine.HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil), Emit: log.Emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	chat := llm.New(llm.Config{BaseURL: srv.URL, Model: "m", APIKey: "k", MaxRetries: 0})
	res, err := h.RunTask(ctx, chat, engine.TaskOptions{}, "task")
	evs := log.all()
	if err != nil || !res.Success || res.Steps != 1 || res.OK != 1 || res.Answer != "The file holds ran." {
		t.Fatalf("RunTask: %v, %+v, answer %q\n%s", err, res.Summary, res.Answer, dump(evs))
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "ran\n" {
		t.Errorf("out.txt: %q (%v)", b, err)
	}
	if v, ok := h.Vars().Get("result"); !ok || v != "ran\n" {
		t.Errorf("result = %v (%v)", v, ok)
	}
	if rej := srv.Rejections(); len(rej) != 0 {
		for _, r := range rej {
			t.Errorf("the model's server rejected a request with %d: %+v\n%s", r.Status, r.Error, r.Body)
		}
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted replies not used", n)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	var steps, dones int
	for _, ev := range evs {
		if ev.Host != h.Name || h.Name == "" {
			t.Errorf("%s event of host %q, want %q", ev.Kind, ev.Host, h.Name)
		}
		switch ev.Kind {
		case event.KindStep:
			steps++
			if s := ev.Step; s.Tool != "execute_command" || s.Status != "ok" || s.Output != "ran\n" || s.SavedAs != "result" {
				t.Errorf("step %+v", s)
			}
		case event.KindDone:
			dones++
			if ev.Done.Status != "success" || ev.Done.Steps != 1 {
				t.Errorf("done %+v", ev.Done)
			}
		}
	}
	if steps != 1 || dones != 1 {
		t.Errorf("%d step events, %d done events, want 1 and 1:\n%s", steps, dones, dump(evs))
	}
}

// TestEngineSecretsScrubbed: a host's secret values never show in its
// events; [REDACTED] does instead.
func TestEngineSecretsScrubbed(t *testing.T) {
	localState(t)
	const secret = "hunter2hunter2"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log eventLog
	h, err := engine.Open(ctx, engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, engine.HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil), Emit: log.Emit,
		Secrets: []string{secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	plan, err := planner.Parse(strings.NewReader("steps:\n  - tool: execute_command\n    parameters:\n      command: echo "+secret+"\n"), "secret.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := h.RunPlan(ctx, plan)
	if err != nil || !sum.Success || sum.Steps != 1 {
		t.Fatalf("RunPlan: %v, %+v", err, sum)
	}
	evs := log.all()
	var step *event.Step
	for _, ev := range evs {
		if ev.Kind == event.KindStep {
			step = ev.Step
		}
	}
	if step == nil {
		t.Fatalf("no step event:\n%s", dump(evs))
	}
	if step.Status != "ok" || !strings.Contains(step.Output, redact.Redacted) || strings.Contains(step.Output, secret) {
		t.Errorf("step output %q (status %s), want %s in place of the secret", step.Output, step.Status, redact.Redacted)
	}
	if all := dump(evs); strings.Contains(all, secret) {
		t.Errorf("the secret shows in the events:\n%s", all)
	}
	if got := h.Redact("the password is " + secret); got != "the password is "+redact.Redacted {
		t.Errorf("Redact: %q", got)
	}
}
