// Command runbench measures the per-step overhead of `agent run` for make
// bench: a plan of N `true` execute_command steps run locally, against a
// shell loop running `sh -c true` N times, in the same process: -runs
// rounds of one run each, interleaved so that load from other jobs hits
// both alike, and the medians compared. It prints both medians, the
// overhead per step, the time per step against issue 31's target (≤ 1.5
// ms and ≤ 1.5× the shell's) and the load average. Each step of the plan goes through the whole
// machinery: condition, templating, validation, risk classification,
// approval, the tool, the record, an fsynced audit line and a JSON event.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "runbench:", err)
		os.Exit(1)
	}
}

func run() error {
	agent := flag.String("agent", "bin/agent", "the agent binary")
	n := flag.Int("n", 500, "steps in the plan")
	runs := flag.Int("runs", 5, "interleaved rounds; the medians count")
	flag.Parse()
	bin, err := filepath.Abs(*agent)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "agent-runbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	plan := filepath.Join(work, "plan.yaml")
	var b strings.Builder
	b.WriteString("name: bench\nsteps:\n")
	for i := 0; i < *n; i++ {
		b.WriteString("  - tool: execute_command\n    parameters: {command: \"true\"}\n")
	}
	if err := os.WriteFile(plan, []byte(b.String()), 0o644); err != nil {
		return err
	}
	env := append(os.Environ(), "CI=true", "XDG_STATE_HOME="+filepath.Join(work, "state"))
	agentRun := func() error {
		cmd := exec.Command(bin, "run", plan, "--json", "--approve", "never")
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("agent run: %w\n%s", err, errOut.String())
		}
		return checkDone(out.Bytes(), *n)
	}
	loop := "i=0; while [ $i -lt " + strconv.Itoa(*n) + " ]; do sh -c true; i=$((i+1)); done"
	shellRun := func() error {
		cmd := exec.Command("sh", "-c", loop)
		cmd.Env = env
		return cmd.Run()
	}
	load0 := loadAvg()
	var agentTs, shellTs []time.Duration
	for range max(*runs, 1) {
		for _, r := range []struct {
			f  func() error
			ts *[]time.Duration
		}{{agentRun, &agentTs}, {shellRun, &shellTs}} {
			start := time.Now()
			if err := r.f(); err != nil {
				return err
			}
			*r.ts = append(*r.ts, time.Since(start))
		}
	}
	agentT, shellT := median(agentTs), median(shellTs)
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(*n) }
	overhead := per(agentT) - per(shellT)
	ratio := agentT.Seconds() / shellT.Seconds()
	verdict := "ok"
	if per(agentT) > 1.5 || ratio > 1.5 {
		verdict = "ABOVE TARGET"
	}
	fmt.Printf("agent run: %d × true: median %.3fs (%.3f ms/step); shell loop of sh -c true: median %.3fs (%.3f ms/step); %d interleaved rounds, load %s → %s\n",
		*n, agentT.Seconds(), per(agentT), shellT.Seconds(), per(shellT), max(*runs, 1), load0, loadAvg())
	fmt.Printf("overhead %.3f ms/step; ratio agent/shell = %.2f (target ≤ 1.5 ms/step and ≤ 1.5×: %s)\n",
		overhead, ratio, verdict)
	return nil
}

// median is the middle of ds (the mean of the two middle ones when even).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadAvg is the 1-minute load average, "?" when unknown.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// checkDone makes sure every step ran: a timing of a failed run means nothing.
func checkDone(out []byte, n int) error {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var done struct {
		Event  string `json:"event"`
		Status string `json:"status"`
		OK     int    `json:"ok"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &done); err != nil {
		return fmt.Errorf("agent run: last line: %w", err)
	}
	if done.Event != "done" || done.Status != "success" || done.OK != n {
		return errors.New("agent run did not run every step: " + string(lines[len(lines)-1]))
	}
	return nil
}
