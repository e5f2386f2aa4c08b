// Command runbench measures the per-step overhead of `agent run` for make
// bench: a plan of N `true` execute_command steps run locally (-command
// another), against a shell loop running `sh -c true` N times, in the same process: -runs
// rounds, interleaved so that load from other jobs hits both alike, and
// the medians compared. Each round also runs a plan of one step, so that
// agent's marginal step — (plan of N − plan of 1) / (N − 1), without the
// process's start and the confinement's set-up — is reported beside the
// whole run's. It prints the medians, the time per step against issue
// 31's target (≤ 1.5 ms and ≤ 1.5× the shell's) and the load average.
// Each step of the plan goes through the whole machinery: condition,
// templating, validation, risk classification, approval, the tool, the
// record, an fsynced audit line and a JSON event.
//
// With -base OLD it is an A/B: each round runs OLD's plans too, in the
// same interleaving, and both builds' figures are printed.
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

// build is one agent binary under test and its timings.
type build struct {
	name, bin string
	whole     []time.Duration // the plan of n
	one       []time.Duration // the plan of 1
	cpu       []time.Duration // the plan of n's user and system time
}

func run() error {
	agent := flag.String("agent", "bin/agent", "the agent binary")
	base := flag.String("base", "", "an older agent binary to compare against (A/B in the same rounds)")
	n := flag.Int("n", 500, "steps in the plan")
	runs := flag.Int("runs", 5, "interleaved rounds; the medians count")
	command := flag.String("command", "true", "each step's command (plain words: YAML and sh take it as it is)")
	flag.Parse()
	if strings.ContainsAny(*command, "'\"\\\n{}[]#:&*!|>%@`") {
		return errors.New("-command: plain words only (YAML and sh read it as it is)")
	}
	if *n < 2 {
		return errors.New("-n must be at least 2")
	}
	var builds []*build
	for _, b := range []struct{ name, bin string }{{"base", *base}, {"agent", *agent}} {
		if b.bin == "" {
			continue
		}
		abs, err := filepath.Abs(b.bin)
		if err != nil {
			return err
		}
		builds = append(builds, &build{name: b.name, bin: abs})
	}
	work, err := os.MkdirTemp("", "agent-runbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	plans := map[int]string{}
	for _, k := range []int{*n, 1} {
		p := filepath.Join(work, "plan"+strconv.Itoa(k)+".yaml")
		var b strings.Builder
		b.WriteString("name: bench\nsteps:\n")
		for range k {
			b.WriteString("  - tool: execute_command\n    parameters: {command: \"" + *command + "\"}\n")
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return err
		}
		plans[k] = p
	}
	env := append(os.Environ(), "CI=true", "XDG_STATE_HOME="+filepath.Join(work, "state"))
	agentRun := func(bin string, k int) (time.Duration, time.Duration, error) {
		cmd := exec.Command(bin, "run", plans[k], "--json", "--approve", "never")
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, 0, fmt.Errorf("%s run: %w\n%s", bin, err, errOut.String())
		}
		d := time.Since(start)
		return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), checkDone(out.Bytes(), k)
	}
	loop := "i=0; while [ $i -lt " + strconv.Itoa(*n) + " ]; do sh -c '" + *command + "' >/dev/null; i=$((i+1)); done"
	var shellTs, shellCPU []time.Duration
	for _, b := range builds { // warm: the state directory, the page cache
		if _, _, err := agentRun(b.bin, 1); err != nil {
			return err
		}
	}
	load0 := loadAvg()
	for range max(*runs, 1) {
		for _, b := range builds {
			d, cpu, err := agentRun(b.bin, *n)
			if err != nil {
				return err
			}
			b.whole, b.cpu = append(b.whole, d), append(b.cpu, cpu)
			if d, _, err = agentRun(b.bin, 1); err != nil {
				return err
			}
			b.one = append(b.one, d)
		}
		cmd := exec.Command("sh", "-c", loop)
		cmd.Env = env
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("shell loop: %w", err)
		}
		shellTs = append(shellTs, time.Since(start))
		shellCPU = append(shellCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	shell := ms(median(shellTs)) / float64(*n)
	fmt.Printf("%d × %s, %d interleaved rounds, load %s → %s; shell loop of sh -c '%s': %.3f ms/command, CPU %.3f ms\n",
		*n, *command, max(*runs, 1), load0, loadAvg(), *command, shell, ms(median(shellCPU))/float64(*n))
	for _, b := range builds {
		whole := ms(median(b.whole)) / float64(*n)
		marginal := (ms(median(b.whole)) - ms(median(b.one))) / float64(*n-1)
		verdict := "ok"
		if marginal > 1.5 || marginal/shell > 1.5 {
			verdict = "ABOVE TARGET"
		}
		fmt.Printf("%s (%s): whole %.3f ms/step (%.2f×), marginal %.3f ms/step (%.2f× the loop; target ≤ 1.5 ms and ≤ 1.5×: %s); CPU %.3f ms/step whole\n",
			b.name, b.bin, whole, whole/shell, marginal, marginal/shell, verdict, ms(median(b.cpu))/float64(*n))
	}
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
