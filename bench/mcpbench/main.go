// Command mcpbench measures the per-call overhead of `agent mcp` on a warm
// connection against `agent exec` and plain `ssh` with ControlMaster, on
// the same host in the same run: N calls of `true` each, median and
// quartiles, with the load average before and after (the machine is
// shared). Run it through bench/mcp.sh, inside testenv's testhost.
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
	ssh, err := sshCM(host, n)
	if err != nil {
		return err
	}
	mcpT, err := mcpCalls(agent, host, n)
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
	}{{"ssh (ControlMaster, warm)", ssh}, {"agent mcp (warm connection)", mcpT}, {"agent exec (new process)", ex}} {
		fmt.Printf("%-28s %8s %8s %8s %6d\n", r.name, q(r.d, 25), q(r.d, 50), q(r.d, 75), len(r.d))
	}
	fmt.Printf("ratio agent mcp / ssh ControlMaster = %.3f (target ≤ 0.3)\n", float64(q(mcpT, 50))/float64(q(ssh, 50)))
	fmt.Printf("ratio agent exec / ssh ControlMaster = %.3f\n", float64(q(ex, 50))/float64(q(ssh, 50)))
	return nil
}

// sshCM times `ssh HOST true` over a ControlMaster that is already up.
func sshCM(host string, n int) ([]time.Duration, error) {
	dir, err := os.MkdirTemp("", "mcpbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(os.Getenv("HOME"), ".ssh", "config") // ssh takes ~ from passwd
	args := []string{"-F", cfg, "-o", "ControlMaster=auto", "-o", "ControlPath=" + filepath.Join(dir, "cm"), "-o", "ControlPersist=60", host}
	defer exec.Command("ssh", append(args[:len(args)-1:len(args)-1], "-O", "exit", host)...).Run()
	if out, err := exec.Command("ssh", append(args, "true")...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ssh: %v: %s", err, out)
	}
	return times(n, func() error { return exec.Command("ssh", append(args, "true")...).Run() })
}

// mcpCalls times execute_command `true` through `agent mcp` over stdio,
// after one call that opens the connection.
func mcpCalls(agent, host string, n int) ([]time.Duration, error) {
	ctx := context.Background()
	cmd := exec.Command(agent, "mcp", "--approve", "never")
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("agent mcp: %w", err)
	}
	defer cs.Close()
	call := func() error {
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
		return nil, err
	}
	return times(n, call)
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
