package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// A plan's static steps in one request (executor/batch.go): what a batch
// leaves — the summary, the events, the audit lines, the undo journal, the
// files on the host — is what the same plan run a step at a time leaves,
// over OpenSSH's sshd with the launcher's served worker.

// batchPlan is the fan-out plan's shape with an output on both streams;
// fail is step 2's command.
func batchPlan(fail string) string {
	return `name: batch
steps:
  - tool: execute_command
    description: kernel release
    parameters: {command: "uname -r"}
    save_output_as: kernel
  - tool: execute_command
    description: both streams
    parameters: {command: "echo two; echo err >&2; ` + fail + `"}
    save_output_as: two
  - tool: execute_command
    description: write and read back a small file
    parameters:
      command: "mkdir -p {{root}}/{{inventory_hostname}} && echo {{inventory_hostname}} > {{root}}/{{inventory_hostname}}/f && cat {{root}}/{{inventory_hostname}}/f"
`
}

// batchRun is what one run of a plan left.
type batchRun struct {
	sum     executor.Summary
	events  []string // normalized
	audit   []string // normalized, in order
	journal []string // normalized, sorted
	trips   tripReport
}

type batchHost struct {
	t       *testing.T
	line    *tripLine
	cfgFile string
	root    string              // on the host
	local   func(string) string // a host's path on this machine
}

// startBatchHost is OpenSSH's sshd on loopback, through a delay line.
func startBatchHost(t *testing.T) *batchHost {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the launcher and starts sshd")
	}
	home := t.TempDir()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	return newBatchHost(t, d.Host, t.TempDir(), func(p string) string { return p })
}

// newBatchHost reaches h through a delay line that counts round trips.
func newBatchHost(t *testing.T, h testenv.Host, root string, local func(string) string) *batchHost {
	t.Helper()
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	line := startTripLine(t, h.Addr, 5*time.Millisecond)
	kh := writeFile(t, "known_hosts", fmt.Sprintf("[127.0.0.1]:%d %s", line.port, gossh.MarshalAuthorizedKey(h.HostKey)))
	cfgFile := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host rtt\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		line.port, h.User, h.IdentityFile, kh))
	return &batchHost{t: t, line: line, cfgFile: cfgFile, root: root, local: local}
}

// run runs planText on the host as name, batched or a step at a time,
// with a state directory of its own.
func (bh *batchHost) run(planText, name string, sequential bool) batchRun {
	t := bh.t
	t.Helper()
	launcher := confinetest.Launcher(t)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	os.RemoveAll(bh.local(filepath.Join(bh.root, name)))
	policy := safety.DefaultPolicy()
	plan, err := planner.Parse(strings.NewReader(planText), "batch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := planner.Validate(plan, tools.Default(policy), []string{"root", "inventory_hostname"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := sshtr.Resolve("rtt", sshtr.ResolveOptions{ConfigFile: bh.cfgFile})
	if err != nil {
		t.Fatal(err)
	}
	at := bh.line.seen()
	tr, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &tripCounter{tr: tr, line: bh.line, base: at, sequential: sequential}
	vars, err := engine.ParseVars([]string{"root=" + bh.root, "inventory_hostname=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var run batchRun
	h, err := engine.OpenOn(c, name, engine.HostOptions{
		Policy: policy, Approver: safety.NewApprover(safety.ModeMedium, nil), Vars: vars,
		Enforcement: engine.Enforcement{Launcher: launcher, Require: true},
		Emit:        func(ev event.Event) { run.events = append(run.events, normalEvent(ev)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	run.sum, err = h.RunPlan(ctx, plan)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.step = -1
	h.Close()
	run.trips = c.report()
	b, err := os.ReadFile(filepath.Join(state, "agent", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		run.audit = append(run.audit, normalJSON(t, l))
	}
	idx, _ := filepath.Glob(filepath.Join(state, "agent", "*", "*", "*", "index.jsonl"))
	more, _ := filepath.Glob(filepath.Join(state, "agent", "*", "*", "index.jsonl"))
	for _, f := range append(idx, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				run.journal = append(run.journal, normalJSON(t, l))
			}
		}
	}
	slices.Sort(run.journal)
	return run
}

// normalEvent is ev without what differs between two runs (times,
// session).
func normalEvent(ev event.Event) string {
	ev.Session = ""
	switch {
	case ev.Step != nil:
		s := *ev.Step
		s.DurationMS = 0
		ev.Step = &s
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// normalJSON is a JSON line without its times, durations and session.
func normalJSON(t *testing.T, line string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	for k := range m {
		if strings.Contains(k, "time") || strings.Contains(k, "duration") || strings.Contains(k, "session") || k == "undo" || k == "prev" || k == "seq" {
			delete(m, k)
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// decisions are the audit lines' decisions in order.
func decisions(lines []string) []string {
	var out []string
	for _, l := range lines {
		var m map[string]any
		json.Unmarshal([]byte(l), &m)
		out = append(out, fmt.Sprint(m["decision"]))
	}
	return out
}

func TestBatchedStepsAsSequential(t *testing.T) {
	batchedAsSequential(t, startBatchHost(t))
}

// On Dropbear with BusyBox's sh (no bash): the same.
func TestBatchedStepsAsSequentialDropbear(t *testing.T) {
	bh := startDropbearBatchHost(t)
	batchedAsSequential(t, bh)
	batchedStepFails(t, bh)
}

func startDropbearBatchHost(t *testing.T) *batchHost {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the launcher and starts Dropbear")
	}
	d := testenv.StartDropbear(t, testenv.DropbearOptions{})
	root := d.Home + "/work"
	if err := d.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return newBatchHost(t, d.Host, root, d.Path)
}

func batchedAsSequential(t *testing.T, bh *batchHost) {
	bh.run(batchPlan("true"), "warmup", true) // the launcher and rules kept
	seq := bh.run(batchPlan("true"), "h", true)
	bat := bh.run(batchPlan("true"), "h", false)
	if !seq.sum.Success || !bat.sum.Success || seq.sum.Steps != 3 || bat.sum.Steps != 3 {
		t.Fatalf("sequential %+v, batched %+v", seq.sum, bat.sum)
	}
	if !slices.Equal(steady(seq.events), steady(bat.events)) {
		t.Errorf("events differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.events, "\n"), strings.Join(bat.events, "\n"))
	}
	if a, b := slices.Sorted(slices.Values(seq.audit)), slices.Sorted(slices.Values(bat.audit)); !slices.Equal(a, b) {
		t.Errorf("audit lines differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.audit, "\n"), strings.Join(bat.audit, "\n"))
	}
	// The batch's lines before the run are all written before it is sent.
	if got, want := strings.Join(decisions(bat.audit), " "), "started started started allowed allowed allowed"; got != want {
		t.Errorf("batched audit decisions %q, want %q", got, want)
	}
	if got, want := strings.Join(decisions(seq.audit), " "), "started allowed started allowed started allowed"; got != want {
		t.Errorf("sequential audit decisions %q, want %q", got, want)
	}
	if len(seq.journal) == 0 || !slices.Equal(seq.journal, bat.journal) {
		t.Errorf("undo journals differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.journal, "\n"), strings.Join(bat.journal, "\n"))
	}
	if b, err := os.ReadFile(bh.local(filepath.Join(bh.root, "h", "f"))); err != nil || string(b) != "h\n" {
		t.Errorf("the third step's file: %q, %v", b, err)
	}
	// Three steps, one round trip.
	if seq.trips.phases["step 1"]+seq.trips.phases["step 2"]+seq.trips.phases["step 3"] != 3 || len(stepTrips(bat.trips)) != 1 {
		t.Errorf("the steps' round trips: want 3 a step at a time, 1 batched\nbatched:\n%s\nsequential:\n%s", bat.trips, seq.trips)
	}
}

// TestBatchedStepFails: step 2 failing stops step 3 in the batch as a
// step at a time does: the same events and summary, no file; step 3's
// audit line before the run is followed by one that says it did not run.
func TestBatchedStepFails(t *testing.T) {
	batchedStepFails(t, startBatchHost(t))
}

func batchedStepFails(t *testing.T, bh *batchHost) {
	seq := bh.run(batchPlan("exit 3"), "h", true)
	bat := bh.run(batchPlan("exit 3"), "h", false)
	for _, r := range []batchRun{seq, bat} {
		if r.sum.Success || r.sum.Steps != 2 || r.sum.Failed == nil || r.sum.Failed.Step != 2 {
			t.Errorf("summary %+v, want failed at step 2", r.sum)
		}
	}
	if !slices.Equal(steady(seq.events), steady(bat.events)) {
		t.Errorf("events differ:\nsequential:\n%s\nbatched:\n%s", strings.Join(seq.events, "\n"), strings.Join(bat.events, "\n"))
	}
	if _, err := os.Stat(bh.local(filepath.Join(bh.root, "h"))); err == nil {
		t.Error("step 3 ran after step 2 failed")
	}
	if got, want := strings.Join(decisions(bat.audit), " "), "started started started allowed allowed skipped"; got != want {
		t.Errorf("batched audit decisions %q, want %q", got, want)
	}
	if last := bat.audit[len(bat.audit)-1]; !strings.Contains(last, "not run: step 2 failed") {
		t.Errorf("step 3's last audit line: %s", last)
	}
	if got := strings.Join(decisions(seq.audit), " "); got != "started allowed started allowed" {
		t.Errorf("sequential audit decisions %q", got)
	}
}

// TestBatchWaitsForDependent: a step that uses what an earlier one saved
// is not in its batch: it is prepared (and its command sent) after that
// step ended.
func TestBatchWaitsForDependent(t *testing.T) {
	bh := startBatchHost(t)
	plan := strings.Replace(batchPlan("true"), "echo {{inventory_hostname}} >", "echo {{kernel}} >", 1)
	bh.run(plan, "warmup", false)
	r := bh.run(plan, "h", false)
	if !r.sum.Success {
		t.Fatalf("%+v", r.sum)
	}
	var steps []tripCall
	for _, c := range r.trips.calls {
		if strings.HasPrefix(c.what, "Run step") {
			steps = append(steps, c)
		}
	}
	if len(steps) != 3 || steps[0].to != steps[1].to || steps[2].from < steps[1].to || len(stepTrips(r.trips)) != 2 {
		t.Errorf("want steps 1 and 2 in one round trip, step 3 after it:\n%s", r.trips)
	}
	uname, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	if b, _ := os.ReadFile(filepath.Join(bh.root, "h", "f")); string(b) != string(uname) {
		t.Errorf("step 3 wrote %q, want step 1's output %q", b, uname)
	}
}

// stepTrips are the round trips the steps' commands spanned, each once.
func stepTrips(r tripReport) map[int]bool {
	levels := map[int]bool{}
	for _, c := range r.calls {
		if strings.HasPrefix(c.what, "Run step") {
			for l := c.from + 1; l <= c.to; l++ {
				levels[l] = true
			}
		}
	}
	return levels
}

// steady is events with each run of output events in one order: stdout
// and stderr reach agent apart, in either order, batched or not.
func steady(events []string) []string {
	out := slices.Clone(events)
	isOut := func(e string) bool { return strings.HasPrefix(e, `{"event":"output"`) }
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && isOut(out[j]) {
			j++
		}
		if j > i {
			slices.Sort(out[i:j])
			i = j
		} else {
			i++
		}
	}
	return out
}
