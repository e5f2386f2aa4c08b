// Command runbench measures the per-step overhead of `agent run` for make
// bench: a plan of N `true` execute_command steps run locally, against a
// shell loop running `sh -c true` N times, in the same process, best of
// -runs. It prints both times, the overhead per step (target ≤ 2 ms) and
// the ratio agent/shell. Each step of the plan goes through the whole
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
	runs := flag.Int("runs", 3, "runs of each; the best counts")
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
	agentT, err := best(*runs, agentRun)
	if err != nil {
		return err
	}
	shellT, err := best(*runs, shellRun)
	if err != nil {
		return err
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(*n) }
	overhead := per(agentT) - per(shellT)
	verdict := "ok"
	if overhead > 2 {
		verdict = "ABOVE TARGET"
	}
	fmt.Printf("agent run: %d × true: %.3fs (%.3f ms/step); shell loop of sh -c true: %.3fs (%.3f ms/step)\n",
		*n, agentT.Seconds(), per(agentT), shellT.Seconds(), per(shellT))
	fmt.Printf("overhead %.3f ms/step (target ≤ 2: %s)  ratio agent/shell = %.2f\n",
		overhead, verdict, agentT.Seconds()/shellT.Seconds())
	return nil
}

// best runs f runs times and returns the shortest duration.
func best(runs int, f func() error) (time.Duration, error) {
	var min time.Duration
	for i := 0; i < max(runs, 1); i++ {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(start); i == 0 || d < min {
			min = d
		}
	}
	return min, nil
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
