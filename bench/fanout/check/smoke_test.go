package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestFanoutSmoke is the fan-out benchmark at CI size (issue 31): agent's
// default mode (--approve medium, every step confined, the launcher as
// agent's defaults handle it) and parallel-ssh on 10 loopback hosts, one
// checked run each; run.sh fails when any host's results differ from
// parallel-ssh's (check same). No network: sshd on 127.0.0.1. It fails
// when CI=true and a tool is missing, and is skipped otherwise.
func TestFanoutSmoke(t *testing.T) {
	for _, c := range []string{"bash", "python3", "/usr/bin/time", "ssh", "ssh-keygen", "parallel-ssh", "/usr/sbin/sshd"} {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found (CI=true): install openssh-server, openssh-client, pssh, time, python3", c)
			}
			t.Skipf("%s not found", c)
		}
	}
	if runtime.GOOS != "linux" {
		t.Skip("the confined default mode needs Linux")
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	// agent with -race when the test has it (the packages are then built
	// already), and the launcher beside it, where agent finds it when
	// `make build` embedded none (confine/launchers).
	args := []string{"build", "-o", agent}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	build(nil, append(args, "github.com/autoshell/agent/cmd/agent")...)
	build([]string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + runtime.GOARCH},
		"build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, "agent-launch-linux-"+runtime.GOARCH),
		"github.com/autoshell/agent/cmd/agent-launch")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", "../run.sh")
	cmd.Env = append(os.Environ(), "AGENT="+agent, "HOSTS=10", "FORKS=10", "NSSHD=2", "RUNS=1",
		"MEM=0", "WARMUP=0", "TOOLS=agent pssh", "CI=true", "AGENT_FLAGS=", "SPLIT=0", "KEEP=0", "RESULTS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fan-out on 10 hosts: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "run 1 agent: every host's results = parallel-ssh's") {
		t.Fatalf("no comparison with parallel-ssh's results:\n%s", out)
	}
	t.Logf("10 hosts, default mode and parallel-ssh, compared host by host in %s", time.Since(start).Round(time.Millisecond))
}
