package executor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// harness runs plans locally with a fake prompter and collects events.
type harness struct {
	t      *testing.T
	dir    string
	state  string
	events []event.Event
	asked  []safety.Request
	answer bool
	audit  *audit.Log
	jrnl   *journal.Journal
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), state: t.TempDir()}
	a, err := audit.Open(filepath.Join(h.state, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	h.audit = a
	j, err := journal.Open(h.state, "s1", "local")
	if err != nil {
		t.Fatal(err)
	}
	h.jrnl = j
	return h
}

func (h *harness) executor(mode safety.Mode, dry bool, vars map[string]string) *Executor {
	h.t.Helper()
	tr, err := local.New()
	if err != nil {
		h.t.Fatal(err)
	}
	ctx := execctx.New()
	for k, v := range vars {
		if err := ctx.Set(k, v); err != nil {
			h.t.Fatal(err)
		}
	}
	prompter := safety.PrompterFunc(func(_ context.Context, req safety.Request) (safety.Decision, error) {
		h.asked = append(h.asked, req)
		return safety.Decision{Allowed: h.answer}, nil
	})
	return New(Config{
		Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(mode, prompter),
		Audit: h.audit, Journal: h.jrnl, Session: "s1", DryRun: dry, Vars: ctx,
		Emit: func(ev event.Event) { h.events = append(h.events, ev) },
	})
}

func (h *harness) write(name, content string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) read(p string) string {
	h.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *harness) steps() []*event.Step {
	var out []*event.Step
	for _, ev := range h.events {
		if ev.Kind == event.KindStep {
			out = append(out, ev.Step)
		}
	}
	return out
}

// auditLines are the audit log's step records (not the lines written
// before a step runs).
func (h *harness) auditLines() []map[string]any {
	h.t.Helper()
	var out []map[string]any
	for _, m := range h.allAuditLines() {
		if m["decision"] != audit.Started {
			out = append(out, m)
		}
	}
	return out
}

// allAuditLines are every line of the audit log.
func (h *harness) allAuditLines() []map[string]any {
	h.t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(h.read(filepath.Join(h.state, "audit.log"))), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			h.t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestExecutorFixScript(t *testing.T) {
	h := newHarness(t)
	script := h.write("a.sh", "#!/bin/sh\necho 1\n")
	p, err := planner.ParseFile("../examples/fix-script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := h.executor(safety.ModeMedium, false, map[string]string{"script": script})
	sum, err := e.RunPlan(context.Background(), p)
	if err != nil || !sum.Success {
		t.Fatalf("RunPlan: %v, %+v", err, sum)
	}
	if got := h.read(script); got != "#!/bin/sh\necho 2\n" {
		t.Errorf("script = %q", got)
	}
	if v, _ := e.Vars().Get("verified"); v != true {
		t.Errorf("verified = %v", v)
	}
	if sum.OK != 6 || sum.Steps != 6 {
		t.Errorf("summary %+v", sum)
	}
	last := h.events[len(h.events)-1]
	done, ok := last.Done, last.Kind == event.KindDone
	if !ok || done.Status != "success" {
		t.Errorf("last event %#v", h.events[len(h.events)-1])
	}
	if n := len(h.auditLines()); n != 6 {
		t.Errorf("%d audit lines, want 6", n)
	}
	// The journal holds the script as it was: undo restores it.
	acts, err := h.jrnl.Restore(context.Background(), restorer{})
	if err != nil || len(acts) != 1 {
		t.Fatalf("Restore: %v %v", acts, err)
	}
	if got := h.read(script); got != "#!/bin/sh\necho 1\n" {
		t.Errorf("after undo script = %q", got)
	}
}

// restorer writes locally.
type restorer struct{}

func (restorer) WriteFile(ctx context.Context, path string, r io.Reader, perm os.FileMode) (int64, error) {
	tr, _ := local.New()
	return tr.WriteFile(ctx, path, r, perm)
}

func (restorer) Remove(_ context.Context, path string) error { return os.Remove(path) }

func (restorer) RemoveDir(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func (restorer) ReadFile(ctx context.Context, path string, w io.Writer) (int64, error) {
	tr, _ := local.New()
	return tr.ReadFile(ctx, path, w)
}

func (restorer) Chmod(_ context.Context, path string, mode os.FileMode) error {
	return os.Chmod(path, mode)
}

func TestExecutorConditionFalseAndError(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	ctx := context.Background()
	res, err := e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo hi"}, SaveOutputAs: "x"})
	if err != nil || res.Status != execctx.StatusOK || res.Observation != "hi\n" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	res, _ = e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo no"}, Condition: "x.strip() == 'bye'"})
	if res.Status != execctx.StatusSkipped || res.Observation != "[skipped: condition x.strip() == 'bye' was false]" {
		t.Errorf("false condition: %+v", res)
	}
	res, _ = e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo no"}, Condition: "x.strip( == "})
	if res.Status != execctx.StatusError || !strings.HasPrefix(res.Observation, "[ERROR]: condition") {
		t.Errorf("bad condition: %+v", res)
	}
	res, _ = e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo {{nope}}"}})
	if res.Status != execctx.StatusError || !strings.Contains(res.Observation, "nope") {
		t.Errorf("unknown var: %+v", res)
	}
	res, _ = e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo err >&2; exit 3"}})
	if res.Status != execctx.StatusError || res.Observation != "[ERROR]: err\n[exit code 3]" {
		t.Errorf("exit 3: %+v", res)
	}
	lines := h.auditLines()
	if len(lines) != 5 || lines[1]["decision"] != "skipped" || lines[3]["decision"] != "skipped" {
		t.Errorf("audit: %v", lines)
	}
}

func TestExecutorDenied(t *testing.T) {
	h := newHarness(t)
	f := h.write("f.txt", "old\n")
	plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
		{Tool: "write_file", Parameters: map[string]any{"file_path": f, "content": "new\n"}},
		{Tool: "execute_command", Parameters: map[string]any{"command": "echo after"}},
	}}}}
	// Without a prompter: denied by policy, the plan stops.
	e := h.executor(safety.ModeNever, false, nil)
	sum, err := e.RunPlan(context.Background(), plan)
	if err != nil || sum.Success || sum.Denied != 1 || sum.Steps != 1 || sum.Failed == nil {
		t.Fatalf("summary %+v %v", sum, err)
	}
	if got := h.read(f); got != "old\n" {
		t.Errorf("file changed: %q", got)
	}
	if obs := sum.Failed.Observation; !strings.HasPrefix(obs, "[denied by safety policy: medium risk") {
		t.Errorf("observation %q", obs)
	}
	if l := h.auditLines(); len(l) != 1 || l[0]["decision"] != "denied" {
		t.Errorf("audit %v", l)
	}
	// Asked on a terminal: the prompt carries the diff; "no" denies.
	e = h.executor(safety.ModeAsk, false, nil)
	sum, _ = e.RunPlan(context.Background(), plan)
	if sum.Denied != 1 || len(h.asked) != 1 || !strings.Contains(h.asked[0].Diff, "+new") || h.asked[0].Path != f {
		t.Errorf("asked %+v, summary %+v", h.asked, sum)
	}
	h.answer = true
	e = h.executor(safety.ModeAsk, false, nil)
	if sum, _ = e.RunPlan(context.Background(), plan); !sum.Success || h.read(f) != "new\n" {
		t.Errorf("approved: %+v, file %q", sum, h.read(f))
	}
}

func TestExecutorDryRun(t *testing.T) {
	h := newHarness(t)
	f := h.write("c.txt", "debug: false\n")
	plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
		{Tool: "read_file", Parameters: map[string]any{"file_path": f}, SaveOutputAs: "cfg"},
		{Tool: "edit_file", Parameters: map[string]any{"file_path": f, "search_pattern": "false", "replacement": "true"}, Condition: "'false' in cfg"},
		{Tool: "execute_command", Parameters: map[string]any{"command": "sh " + f}, SaveOutputAs: "out"},
		{Tool: "check_condition", Parameters: map[string]any{"condition": "out == ''"}},
	}}}}
	e := h.executor(safety.ModeAll, true, nil)
	sum, err := e.RunPlan(context.Background(), plan)
	if err != nil || !sum.Success || sum.OK != 1 || sum.Skipped != 3 {
		t.Fatalf("summary %+v %v", sum, err)
	}
	if got := h.read(f); got != "debug: false\n" {
		t.Errorf("dry run changed the file: %q", got)
	}
	st := h.steps()
	if !st[1].DryRun || !strings.Contains(st[1].Diff, "+debug: true") {
		t.Errorf("edit step %+v", st[1])
	}
	if !strings.Contains(st[3].Output, "needs out") {
		t.Errorf("dependent step %+v", st[3])
	}
}

// TestExecutorDryRunReadsWrittenFile: in a dry run, reading a file that a
// skipped step would have written shows what it would read, and what uses
// the read is skipped in turn, instead of failing on a file not there.
func TestExecutorDryRunReadsWrittenFile(t *testing.T) {
	h := newHarness(t)
	f := filepath.Join(h.dir, "new.conf")
	plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
		{Tool: "write_file", Parameters: map[string]any{"file_path": f, "content": "port: 80\n"}},
		{Tool: "read_file", Parameters: map[string]any{"file_path": f}, SaveOutputAs: "conf"},
		{Tool: "check_condition", Parameters: map[string]any{"condition": "'80' in conf"}},
		{Tool: "read_file", Parameters: map[string]any{"file_path": filepath.Join(h.dir, "other")}},
	}}}}
	h.write("other", "x\n")
	e := h.executor(safety.ModeAll, true, nil)
	sum, err := e.RunPlan(context.Background(), plan)
	if err != nil || !sum.Success || sum.OK != 1 || sum.Skipped != 3 {
		t.Fatalf("summary %+v %v", sum, err)
	}
	if _, err := os.Stat(f); !os.IsNotExist(err) {
		t.Errorf("dry run wrote the file: %v", err)
	}
	st := h.steps()
	if !st[1].DryRun || !strings.Contains(st[1].Output, "would read the file written above by step 1") {
		t.Errorf("read step %+v", st[1])
	}
	if !strings.Contains(st[2].Output, "needs conf") {
		t.Errorf("dependent step %+v", st[2])
	}
	if st[3].Status != "ok" {
		t.Errorf("an unrelated read did not run: %+v", st[3])
	}
}

func TestExecutorJournalFailureRefusesChange(t *testing.T) {
	h := newHarness(t)
	f := h.write("big.txt", "0123456789")
	h.jrnl.MaxBytes = 4
	e := h.executor(safety.ModeAll, false, nil)
	res, err := e.RunStep(context.Background(), planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": f, "content": "x"}})
	if err != nil || res.Status != execctx.StatusError || !strings.Contains(res.Observation, "refused") {
		t.Fatalf("%+v %v", res, err)
	}
	if got := h.read(f); got != "0123456789" {
		t.Errorf("file changed: %q", got)
	}
}

func TestExecutorInterrupted(t *testing.T) {
	h := newHarness(t)
	e := h.executor(safety.ModeMedium, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
		{Tool: "execute_command", Parameters: map[string]any{"command": "sleep 5"}},
		{Tool: "execute_command", Parameters: map[string]any{"command": "echo never"}},
	}}}}
	start := time.Now()
	sum, err := e.RunPlan(ctx, plan)
	if err == nil || sum.Success || time.Since(start) > 3*time.Second {
		t.Fatalf("RunPlan: %v %+v after %v", err, sum, time.Since(start))
	}
	last := h.events[len(h.events)-1]
	done, ok := last.Done, last.Kind == event.KindDone
	if !ok || done.Status != "failed" || sum.Steps != 1 {
		t.Errorf("done %+v, summary %+v", done, sum)
	}
	// The two static steps ran as a batch: the second, prepared ahead,
	// has a line that says it did not run.
	l := h.auditLines()
	if len(l) != 2 || l[0]["error"] == nil || l[1]["decision"] != audit.Skipped || !strings.HasPrefix(l[1]["output"].(string), "[not run: step 1 did not end") {
		t.Errorf("audit %v", l)
	}
}

func TestExecutorClassify(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // not /root, a system path
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	home, err := e.homeDir(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(home) // a download writes under the working directory
	for _, c := range []struct {
		tool   string
		params map[string]any
		want   safety.Level
		path   string
	}{
		{"check_condition", map[string]any{"condition": "True"}, safety.Safe, ""},
		{"sys_monitor", map[string]any{"metric": "all"}, safety.Safe, ""},
		{"read_file", map[string]any{"file_path": "~/notes.txt"}, safety.Safe, home + "/notes.txt"},
		{"write_file", map[string]any{"file_path": "/etc/passwd", "content": "x"}, safety.High, "/etc/passwd"},
		{"edit_file", map[string]any{"file_path": "~/a", "search_pattern": "a", "replacement": "b"}, safety.Medium, home + "/a"},
		{"upload_file", map[string]any{"local_path": "/tmp/x", "remote_path": "~/x"}, safety.Medium, home + "/x"},
		{"download_file", map[string]any{"local_path": home + "/missing-download", "remote_path": "~/x"}, safety.Medium, home + "/x"},
		{"execute_command", map[string]any{"command": "ls -l"}, safety.Safe, ""},
		{"execute_command", map[string]any{"command": "$(echo rm) -rf ~"}, safety.High, ""},
		{"grep", map[string]any{"pattern": "; rm -rf ~", "file": "/var/log/syslog"}, safety.Safe, ""},
	} {
		cls, err := e.classifyTool(context.Background(), c.tool, c.params)
		if err != nil || cls.refused != nil || cls.risk.Level != c.want || cls.path != c.path {
			t.Errorf("%s %v: %+v %v, want %s at %q", c.tool, c.params, cls, err, c.want, c.path)
		}
	}
	if cls, _ := e.classifyTool(context.Background(), "write_file", map[string]any{"file_path": "../../etc/x", "content": "x"}); cls.refused == nil {
		t.Errorf("a .. escape is not refused: %+v", cls)
	}
}

// TestFailedToolSavesNoVariable: a tool that failed has no output to save:
// a check_condition that cannot evaluate, or a read of a missing file,
// leaves its save_output_as unset, so a later use is an unknown-variable
// error (it was "", and the next condition failed on an empty str). A
// command that ran and exited non-zero still saves its output.
func TestFailedToolSavesNoVariable(t *testing.T) {
	h := newHarness(t)
	plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
		{Tool: "check_condition", Parameters: map[string]any{"condition": "int('x') > 1"}, SaveOutputAs: "needs_fix", IgnoreErrors: true},
		{Tool: "read_file", Parameters: map[string]any{"file_path": filepath.Join(h.dir, "missing.txt")}, SaveOutputAs: "content", IgnoreErrors: true},
		{Tool: "execute_command", Parameters: map[string]any{"command": "grep nothing-here " + h.write("empty.txt", "")}, SaveOutputAs: "found", IgnoreErrors: true},
		{Tool: "check_condition", Parameters: map[string]any{"condition": "found == ''"}, SaveOutputAs: "none_found"},
		{Tool: "execute_command", Parameters: map[string]any{"command": "true"}, Condition: "needs_fix", IgnoreErrors: true},
		{Tool: "execute_command", Parameters: map[string]any{"command": "echo {{content}}"}, IgnoreErrors: true},
	}}}}
	e := h.executor(safety.ModeNever, false, nil)
	if _, err := e.RunPlan(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	st := h.steps()
	if len(st) != 6 {
		t.Fatalf("%d steps: %+v", len(st), st)
	}
	for i, want := range []string{"error", "error", "error", "ok", "error", "error"} {
		if st[i].Status != want {
			t.Errorf("step %d: status %s, want %s (%s)", i+1, st[i].Status, want, st[i].Output)
		}
	}
	if st[0].SavedAs != "" || st[1].SavedAs != "" || st[2].SavedAs != "found" || st[3].SavedAs != "none_found" {
		t.Errorf("saved as: %q %q %q %q", st[0].SavedAs, st[1].SavedAs, st[2].SavedAs, st[3].SavedAs)
	}
	for _, i := range []int{4, 5} {
		if out := st[i].Output; !strings.Contains(out, "unknown variable") || strings.Contains(out, "evaluates to") {
			t.Errorf("step %d output %q, want an unknown-variable error", i+1, out)
		}
	}
	for _, name := range []string{"needs_fix", "content"} {
		if _, ok := e.vars.Get(name); ok {
			t.Errorf("variable %s was set by a failed tool", name)
		}
	}
}

func mustParse(t *testing.T, src string) *planner.Plan {
	t.Helper()
	p, err := planner.Parse(strings.NewReader(src), "plan.yaml")
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return p
}

// classifyTool prepares a call of tool and classifies it; a call that
// does not prepare is refused.
func (e *Executor) classifyTool(ctx context.Context, tool string, params map[string]any) (classification, error) {
	p, d := e.prepare(ctx, planner.Step{Tool: tool, Parameters: params})
	switch {
	case d != nil && d.err != nil:
		return classification{}, d.err
	case d != nil:
		return classification{refused: errors.New(d.reason)}, nil
	}
	return e.classify(ctx, p)
}

// TestApprovalEvent: a person's answer is reported as an approval event
// between the step's start and its end; a step decided by the policy
// alone has none.
func TestApprovalEvent(t *testing.T) {
	h := newHarness(t)
	h.answer = true
	e := h.executor(safety.ModeAsk, false, nil)
	ctx := context.Background()
	f := filepath.Join(h.dir, "x.txt")
	if _, err := e.RunStep(ctx, planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": f, "content": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "true"}}); err != nil {
		t.Fatal(err)
	}
	var kinds []event.Kind
	for _, ev := range h.events {
		kinds = append(kinds, ev.Kind)
	}
	want := []event.Kind{event.KindStepStart, event.KindApproval, event.KindStep, event.KindStepStart, event.KindStep}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	a := h.events[1].Approval
	if !a.Allowed || a.Step != 1 || a.Tool != "write_file" || a.Risk != "medium" || a.Reason != "approved by user" {
		t.Errorf("approval %+v", a)
	}
	h.answer = false
	if _, err := e.RunStep(ctx, planner.Step{Tool: "write_file", Parameters: map[string]any{"file_path": f, "content": "y"}}); err != nil {
		t.Fatal(err)
	}
	if a := h.events[len(h.events)-2]; a.Kind != event.KindApproval || a.Approval.Allowed || a.Approval.Reason != "denied by user" {
		t.Errorf("denied: %+v", a)
	}
}
