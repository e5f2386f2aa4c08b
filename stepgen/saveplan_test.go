package stepgen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport/local"
)

func ran(phase int, goal string, status execctx.Status, st planner.Step) RanStep {
	return RanStep{Phase: event.PhaseInfo{Phase: phase, Goal: goal}, Step: st, Status: status}
}

func cmd(c, save, cond string) planner.Step {
	return planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": c}, SaveOutputAs: save, Condition: cond}
}

func TestSavedPlanKeepsWhatRan(t *testing.T) {
	res := Result{Task: "fix  a.sh\nplease", Ran: []RanStep{
		ran(1, "run it", execctx.StatusOK, cmd("sh a.sh", "out", "")),
		ran(1, "run it", execctx.StatusError, cmd("cat missing", "", "")),  // corrected below: dropped
		ran(1, "run it", execctx.StatusDenied, cmd("sudo reboot", "", "")), // did not run: dropped
		ran(2, "fix it", execctx.StatusSkipped, cmd("sed -i s/1/2/ a.sh", "", "out.strip() == '1'")),
		ran(2, "fix it", execctx.StatusOK, cmd("echo {{out}}", "", "")),
		ran(3, "nothing kept", execctx.StatusError, cmd("false", "", "")),
	}}
	p, err := res.SavedPlan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "fix a.sh please" || len(p.Phases) != 2 {
		t.Fatalf("plan %+v", p)
	}
	if ph := p.Phases[0]; ph.Phase != 1 || ph.Goal != "run it" || len(ph.Steps) != 1 || ph.Steps[0].SaveOutputAs != "out" {
		t.Errorf("phase 1 %+v", ph)
	}
	if ph := p.Phases[1]; ph.Phase != 2 || len(ph.Steps) != 2 || ph.Steps[0].Condition != "out.strip() == '1'" {
		t.Errorf("phase 2 %+v", ph)
	}
	if got := res.FailedKept(); len(got) != 0 {
		t.Errorf("failed kept %+v", got)
	}
	// the plan does not share maps with the result
	p.Phases[0].Steps[0].Parameters["command"] = "changed"
	if res.Ran[0].Step.Parameters["command"] != "sh a.sh" {
		t.Error("plan shares parameters with the result")
	}
	data, err := planner.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := planner.Parse(bytes.NewReader(data), "saved.yaml")
	if err != nil || len(back.Steps()) != 3 {
		t.Fatalf("parse back: %v\n%s", err, data)
	}
}

// A failed step whose result a kept step uses is kept: its variable, or
// `last` right after it. A later successful step setting the same
// variable makes the failed one unnecessary.
func TestSavedPlanKeepsFailedDependencies(t *testing.T) {
	res := Result{Ran: []RanStep{
		ran(0, "", execctx.StatusError, cmd("grep ERROR app.log", "errs", "")),
		ran(0, "", execctx.StatusError, cmd("cat a", "content", "")),
		ran(0, "", execctx.StatusOK, cmd("cat b", "content", "")),
		ran(0, "", execctx.StatusError, cmd("test -f c", "", "")),
		ran(0, "", execctx.StatusOK, cmd("echo exit {{last.exit_code}}", "", "")),
		ran(0, "", execctx.StatusSkipped, planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": "errors.txt", "content": "{{errs}}{{content}}"}, Condition: "errs != ''"}),
	}}
	p, err := res.SavedPlan(nil)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, st := range p.Steps() {
		c, _ := st.Parameters["command"].(string)
		cmds = append(cmds, c)
	}
	if got := strings.Join(cmds, "|"); got != "grep ERROR app.log|cat b|test -f c|echo exit {{last.exit_code}}|" {
		t.Errorf("steps %q", got)
	}
	if len(p.Phases) != 1 || p.Phases[0].Goal != "" {
		t.Errorf("react plan phases %+v", p.Phases)
	}
	// the kept failed steps go on failing on replay without stopping it
	for i, want := range []bool{true, false, true, false, false} {
		if got := p.Steps()[i].IgnoreErrors; got != want {
			t.Errorf("step %d ignore_errors = %v, want %v", i+1, got, want)
		}
	}
	kept := res.FailedKept()
	if len(kept) != 2 || kept[0].Step.Parameters["command"] != "grep ERROR app.log" {
		t.Errorf("failed kept %+v", kept)
	}
	data, err := planner.Marshal(p)
	if err != nil || !bytes.HasPrefix(data, []byte("steps:")) && !strings.Contains(string(data), "\nsteps:") {
		t.Errorf("marshal %v:\n%s", err, data)
	}
}

func TestSavedPlanErrors(t *testing.T) {
	if _, err := (Result{}).SavedPlan(nil); !errors.Is(err, ErrNothingToSave) || !strings.Contains(err.Error(), "no step") {
		t.Errorf("empty run: %v", err)
	}
	res := Result{Ran: []RanStep{ran(1, "g", execctx.StatusError, cmd("false", "", "")), ran(1, "g", execctx.StatusDenied, cmd("sudo x", "", ""))}}
	if _, err := res.SavedPlan(nil); !errors.Is(err, ErrNothingToSave) || !strings.Contains(err.Error(), "none of the 2 steps") {
		t.Errorf("only failures: %v", err)
	}
	// a dry run: the model chose steps without seeing the previewed ones run
	res = Result{Ran: []RanStep{ran(1, "g", execctx.StatusOK, cmd("ls", "", "")), {Step: cmd("rm x", "", ""), Status: execctx.StatusSkipped, DryRun: true}}}
	if _, err := res.SavedPlan(nil); !errors.Is(err, ErrDryRunPlan) || !strings.Contains(err.Error(), "1 of its 2 steps were only previewed") {
		t.Errorf("dry run: %v", err)
	}
	// a variable from before the task (an earlier REPL task) is not in the
	// plan: Validate says so.
	res = Result{Ran: []RanStep{ran(1, "g", execctx.StatusOK, cmd("echo {{earlier}}", "", ""))}}
	if _, err := res.SavedPlan(nil); err == nil || !strings.Contains(err.Error(), "earlier") {
		t.Errorf("unknown variable: %v", err)
	}
}

// The adaptive run's saved plan, replayed by the executor in a fresh
// directory, gives the same end state; with the script printing 3 the
// replay changes nothing either.
func TestSavedPlanReplays(t *testing.T) {
	for _, prints := range []string{"1", "3"} {
		t.Run("prints"+prints, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.sh", "#!/bin/sh\necho "+prints+"\n")
			// phase 1: a failed try the model corrects in the same reply
			f.srv.Push(
				testenv.Calls(testenv.Call("submit_plan", twoPhases)),
				testenv.Calls(testenv.Call("execute_command", f.q(`{"command":"sh DIR/missing.sh"}`)),
					testenv.Call("execute_command", f.q(`{"command":"sh DIR/a.sh","save_output_as":"script_output"}`))),
				testenv.Text("ran"),
				testenv.Calls(testenv.Call("edit_file", f.q(`{"file_path":"DIR/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"script_output.strip() == '1'"}`))),
				testenv.Text("Done."))
			res, err := f.run(ModeAdaptive, 0, "fix a.sh", 0)
			if err != nil || !res.Success {
				t.Fatalf("Run: %v %+v", err, res.Summary)
			}
			p, err := res.SavedPlan(nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(p.Steps()); n != 2 {
				t.Fatalf("%d steps saved, want 2 (the failed one dropped)", n)
			}
			data, err := planner.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			// a fresh "host": another directory with the original script
			fresh := t.TempDir()
			if err := os.WriteFile(filepath.Join(fresh, "a.sh"), []byte("#!/bin/sh\necho "+prints+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			replayed := strings.ReplaceAll(string(data), f.dir, fresh)
			back, err := planner.Parse(strings.NewReader(replayed), "saved.yaml")
			if err != nil {
				t.Fatalf("%v\n%s", err, replayed)
			}
			tr, err := local.New()
			if err != nil {
				t.Fatal(err)
			}
			ex := executor.New(executor.Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil)})
			sum, err := ex.RunPlan(context.Background(), back)
			if err != nil || !sum.Success {
				t.Fatalf("replay: %v %+v", err, sum)
			}
			got, _ := os.ReadFile(filepath.Join(fresh, "a.sh"))
			want, _ := os.ReadFile(filepath.Join(f.dir, "a.sh"))
			if string(got) != string(want) {
				t.Errorf("replayed a.sh %q, run's %q", got, want)
			}
		})
	}
}
