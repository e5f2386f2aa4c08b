package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/transport/local"
)

// replayHostVars opens a batchHost named name on this machine, with vars,
// in a batch of its own that reports nothing.
func replayHostVars(t *testing.T, name string, vars map[string]any) *batchHost {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	b := &Batch{}
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := execctx.New()
	for k, v := range vars {
		if err := ctx.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	bh := &batchHost{b: b, t: Target{Name: name}, paths: map[string]bool{}}
	h, err := OpenOn(tr, name, HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil),
		Emit: bh.pass, Secrets: bh.secrets, Vars: ctx,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	bh.h = h
	return bh
}

// runFirst runs steps on h as the model's loop would and returns them as
// the first host's run, each with its status and check_condition answer
// recorded as stepgen.Run records them.
func runFirst(t *testing.T, h *batchHost, steps []planner.Step) *firstRun {
	t.Helper()
	first := &firstRun{host: "first", vars: varsOf(h)}
	for _, st := range steps {
		r, err := h.h.Executor().RunStep(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		rs := stepgen.RanStep{Step: st, Status: r.Status}
		if st.Tool == "check_condition" && r.Status == execctx.StatusOK {
			rs.Answer = r.Output.Value
		}
		first.res.Ran = append(first.res.Ran, rs)
	}
	return first
}

func cmdStep(command, save, cond string) planner.Step {
	return planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": command}, SaveOutputAs: save, Condition: cond}
}

// TestReplayDivergence checks when a host follows the first host's path
// and when it leaves it. Both hosts run the steps for real; they differ in
// the variable n (1 on the first host).
func TestReplayDivergence(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "mark")
	check := func(cond string) planner.Step {
		return planner.Step{Tool: "check_condition", Parameters: map[string]any{"condition": cond}}
	}
	tests := []struct {
		name  string
		steps []planner.Step
		n     string // this host's n
		why   string // "" when the host follows
		ran   int    // steps run here
	}{
		{"same statuses, failures included", []planner.Step{
			cmdStep("echo hi", "x", ""),
			cmdStep("false", "", ""),
			cmdStep("echo no", "", "x.strip() == 'zzz'"),
		}, "1", "", 3},
		{"a step that ran there is skipped by its condition here", []planner.Step{
			cmdStep("echo {{n}}", "x", ""),
			cmdStep("echo yes", "", "x.strip() == '1'"),
			cmdStep("echo after", "", ""),
		}, "2", "", 3},
		{"a step skipped there would run here", []planner.Step{
			cmdStep("echo {{n}}", "x", ""),
			cmdStep("touch "+mark, "", "x.strip() == '2'"),
		}, "2", "step 2 (execute_command) was skipped on first, but its condition x.strip() == '2' is true here", 1},
		{"a step fails here", []planner.Step{
			cmdStep("echo hi", "", ""),
			cmdStep("test {{n}} = 1", "", ""),
			cmdStep("echo never", "", ""),
		}, "2", "step 2 (execute_command): error here ([exit code 1]), ok on first", 2},
		{"a step succeeds here that failed there", []planner.Step{
			cmdStep("test {{n}} = 2", "", ""),
		}, "2", "step 1 (execute_command): ok here", 1},
		{"check_condition answers otherwise", []planner.Step{
			cmdStep("echo {{n}}", "v", ""),
			check("v.strip() == '1'"),
			cmdStep("echo never", "", ""),
		}, "2", "step 2 (check_condition): false here, true on first", 2},
		{"check_condition answers the same (true)", []planner.Step{
			cmdStep("echo {{n}}", "v", ""),
			check("v.strip() == '1'"),
			cmdStep("echo after", "", ""),
		}, "1", "", 3},
		{"check_condition answers the same (false)", []planner.Step{
			cmdStep("echo {{n}}", "v", ""),
			check("v.strip() == '7'"),
		}, "1", "", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := runFirst(t, replayHostVars(t, "first", map[string]any{"n": "1"}), tc.steps)
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("the first host ran the step it should skip")
			}
			h := replayHostVars(t, "here", map[string]any{"n": tc.n})
			sum, why, err := replay(context.Background(), h, first)
			if err != nil {
				t.Fatal(err)
			}
			if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q", why, tc.why)
			}
			if sum.Steps != tc.ran {
				t.Errorf("%d steps run, want %d", sum.Steps, tc.ran)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("a step skipped on the first host ran here")
			}
		})
	}
}

// TestReplayHostSpecific: a step whose parameters hold the first host's
// own value of a variable that differs here is not replayed: the host
// leaves the plan before any step runs. Templates, values the hosts share,
// short values, numbers and booleans do not count.
func TestReplayHostSpecific(t *testing.T) {
	dir := t.TempDir()
	motd := filepath.Join(dir, "motd")
	firstVars := map[string]any{"inventory_hostname": "web01", "ansible_host": "10.0.0.11", "dir": dir,
		"zone": "eu", "port": "8080", "tls": "true"}
	hereVars := map[string]any{"inventory_hostname": "web02", "ansible_host": "10.0.0.12", "dir": dir,
		"zone": "us", "port": "9090", "tls": "false"}
	tests := []struct {
		name  string
		steps []planner.Step
		why   string
		ran   int
	}{
		{"templates", []planner.Step{
			cmdStep("echo {{inventory_hostname}} {{ansible_host}} > "+motd, "", ""),
		}, "", 1},
		{"the first host's name", []planner.Step{
			cmdStep("true", "", ""),
			cmdStep("echo web01 > "+motd, "", ""),
		}, `step 2 (execute_command): its parameters hold first's own inventory_hostname "web01" ("web02" here) instead of {{inventory_hostname}}`, 0},
		{"the first host's address in a file's content", []planner.Step{
			{Tool: "write_file", Parameters: map[string]any{"file_path": motd, "content": "listen 10.0.0.11:80\n"}},
		}, `step 1 (write_file): its parameters hold first's own ansible_host "10.0.0.11"`, 0},
		{"shared, short, numeric and boolean values", []planner.Step{
			cmdStep("echo eu 8080 true > "+motd+" && test -d "+dir, "", ""),
		}, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(motd)
			first := runFirst(t, replayHostVars(t, "first", firstVars), tc.steps)
			os.Remove(motd)
			h := replayHostVars(t, "here", hereVars)
			sum, why, err := replay(context.Background(), h, first)
			if err != nil {
				t.Fatal(err)
			}
			if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q", why, tc.why)
			}
			if sum.Steps != tc.ran {
				t.Errorf("%d steps run, want %d", sum.Steps, tc.ran)
			}
			if _, err := os.Stat(motd); (err == nil) != (tc.ran > 0) {
				t.Errorf("motd: %v", err)
			}
		})
	}
}
