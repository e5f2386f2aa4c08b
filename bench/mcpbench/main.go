// Command mcpbench measures the per-call overhead of `agent mcp` on a warm
// connection against `agent exec` and plain `ssh` with ControlMaster, on
// the same host in the same run: N calls of `true` each, the MCP and ssh
// calls alternating, median and quartiles, with the load average before
// and after (the machine is shared); then N/2 MCP calls back to back (no
// pause between a result and the next call). The MCP calls are made by
// two servers: `--approve never` (the safe `true` confined by the kernel,
// as an MCP client's unapproved calls are) and `--approve all` (every
// call unconfined), in the same rotation as ssh, so that the cost of the
// confinement is measured under the same load. Run it through
// bench/mcp.sh, inside testenv's testhost.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	agent := flag.String("agent", "bin/agent", "the agent binary")
	host := flag.String("host", os.Getenv("TESTHOST_ALIAS"), "the host (an ~/.ssh/config alias)")
	n := flag.Int("n", 200, "calls per contender")
	flag.Parse()
	if err := run(*agent, *host, *n); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

func run(agent, host string, n int) error {
	if host == "" {
		return fmt.Errorf("no host: give -host or run inside testhost (TESTHOST_ALIAS)")
	}
	fmt.Printf("load average before: %s\n", loadavg())
	sshCall, stopCM, err := sshCM(host)
	if err != nil {
		return err
	}
	defer stopCM()
	mcpCall, stopMCP, err := mcpSession(agent, host, "never")
	if err != nil {
		return err
	}
	defer stopMCP()
	openCall, stopOpen, err := mcpSession(agent, host, "all")
	if err != nil {
		return err
	}
	defer stopOpen()
	// The three take turns call by call (which goes first rotates too), so
	// that load from other jobs on the machine falls on all alike; each
	// turn's ratio is kept as well as each one's times.
	ssh := make([]time.Duration, 0, n)
	mcpT := make([]time.Duration, 0, n)
	openT := make([]time.Duration, 0, n)
	ratios := make([]float64, 0, n)
	for i := range n {
		calls := []func() error{sshCall, mcpCall, openCall}
		var d [3]time.Duration
		for j := range 3 {
			k := (i + j) % 3
			if d[k], err = timed(calls[k]); err != nil {
				return err
			}
		}
		ssh, mcpT, openT = append(ssh, d[0]), append(mcpT, d[1]), append(openT, d[2])
		ratios = append(ratios, float64(d[1])/float64(d[0]))
	}
	// Back to back: each call right after the previous one's result, with
	// no pause in which the host can start the next command's shell ahead
	// (the worst case; an MCP client's model thinks between calls).
	b2b, err := times(n/2, mcpCall)
	if err != nil {
		return err
	}
	execN := max(n/10, 10) // a process and a connection each: slower
	ex, err := times(execN, func() error {
		return exec.Command(agent, "--ssh-host", host, "exec", "--", "true").Run()
	})
	if err != nil {
		return fmt.Errorf("agent exec: %w", err)
	}
	fmt.Printf("load average after:  %s\n", loadavg())
	fmt.Printf("%-28s %8s %8s %8s %6s\n", "per call of `true`", "p25", "median", "p75", "calls")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"ssh (ControlMaster, warm)", ssh}, {"agent mcp (warm connection)", mcpT}, {"agent mcp, unconfined", openT}, {"agent mcp, back to back", b2b}, {"agent exec (new process)", ex}} {
		fmt.Printf("%-28s %8s %8s %8s %6d\n", r.name, q(r.d, 25), q(r.d, 50), q(r.d, 75), len(r.d))
	}
	slices.Sort(ratios)
	fmt.Printf("ratio agent mcp / ssh ControlMaster = %.3f (target ≤ 0.3); median of the %d pairs' ratios %.3f (p25 %.3f, p75 %.3f)\n",
		float64(q(mcpT, 50))/float64(q(ssh, 50)), n, ratios[(n-1)/2], ratios[(n-1)/4], ratios[(n-1)*3/4])
	fmt.Printf("ratio agent mcp back to back / ssh ControlMaster = %.3f\n", float64(q(b2b, 50))/float64(q(ssh, 50)))
	fmt.Printf("ratio agent mcp unconfined (--approve all) / ssh ControlMaster = %.3f; confined / unconfined = %.3f\n",
		float64(q(openT, 50))/float64(q(ssh, 50)), float64(q(mcpT, 50))/float64(q(openT, 50)))
	fmt.Printf("ratio agent mcp / agent exec = %.3f; agent exec / ssh ControlMaster = %.3f\n",
		float64(q(mcpT, 50))/float64(q(ex, 50)), float64(q(ex, 50))/float64(q(ssh, 50)))
	return nil
}

// sshCM starts a ControlMaster to host and returns the call that runs
// `ssh HOST true` over it, and the func that stops the master.
func sshCM(host string) (call func() error, stop func(), err error) {
	dir, err := os.MkdirTemp("", "mcpbench")
	if err != nil {
		return nil, nil, err
	}
	cfg := filepath.Join(os.Getenv("HOME"), ".ssh", "config") // ssh takes ~ from passwd
	args := []string{"-F", cfg, "-o", "ControlMaster=auto", "-o", "ControlPath=" + filepath.Join(dir, "cm"), "-o", "ControlPersist=60", host}
	stop = func() {
		exec.Command("ssh", append(args[:len(args)-1:len(args)-1], "-O", "exit", host)...).Run()
		os.RemoveAll(dir)
	}
	if out, err := exec.Command("ssh", append(args, "true")...).CombinedOutput(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("ssh: %v: %s", err, out)
	}
	return func() error { return exec.Command("ssh", append(args, "true")...).Run() }, stop, nil
}

// mcpSession starts `agent mcp --approve APPROVE` over stdio, makes one
// call that opens the connection, and returns the call of
// execute_command `true`.
func mcpSession(agent, host, approve string) (call func() error, stop func(), err error) {
	ctx := context.Background()
	cmd := exec.Command(agent, "mcp", "--approve", approve)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("agent mcp: %w", err)
	}
	call = func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": host, "command": "true"}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("execute_command: %v", res.Content)
		}
		return nil
	}
	if err := call(); err != nil { // connect
		cs.Close()
		return nil, nil, err
	}
	return call, func() { cs.Close() }, nil
}

// timed runs f once and returns how long it took.
func timed(f func() error) (time.Duration, error) {
	t := time.Now()
	err := f()
	return time.Since(t), err
}

// times runs f n times and returns each run's duration.
func times(n int, f func() error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

// q is the p-th percentile of d.
func q(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(10 * time.Microsecond)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
