package engine_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// stall opens a connection to the sshd and reads its banner without going
// on: sshd counts it against MaxStartups until it is closed. (A connection
// made while another is pending — testenv's readiness check's — is itself
// dropped: then it tries again.)
func stall(t *testing.T, port int) net.Conn {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(deadline)
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && strings.HasPrefix(line, "SSH-") {
			t.Cleanup(func() { c.Close() })
			return c
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("banner %q: %v", line, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dropHosts selects n inventory hosts that are aliases of d.
func dropHosts(t *testing.T, d *testenv.SSHD, n int) []engine.Target {
	t.Helper()
	kh, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := writeFile(t, "known_hosts", string(kh))
	sshConfig := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host *\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 10\n",
		d.User, d.IdentityFile, knownHosts))
	var inv strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&inv, "h%d ansible_host=127.0.0.1 ansible_port=%d\n", i, d.Port)
	}
	hosts, err := engine.SelectHosts(engine.InventorySpec{Sources: []string{writeFile(t, "hosts.ini", inv.String())}}, "",
		engine.SSHOverrides{ConfigFile: sshConfig})
	if err != nil {
		t.Fatal(err)
	}
	return hosts
}

// runEcho runs a one-step plan on hosts, all at once.
func runEcho(t *testing.T, ctx context.Context, hosts []engine.Target) (engine.BatchResult, []event.Event) {
	t.Helper()
	var log eventLog
	policy := safety.DefaultPolicy()
	b, err := engine.OpenBatch(engine.BatchOptions{
		Hosts: hosts, Forks: len(hosts), Policy: policy,
		Approver: safety.NewApprover(safety.ModeAll, nil, safety.WithScope(safety.ScopeBatch)),
		Emit:     log.Emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	plan, err := planner.Parse(strings.NewReader(`name: echo
phases:
  - phase: 1
    goal: say the host's name
    steps:
      - tool: execute_command
        parameters:
          command: "echo on {{inventory_hostname}}"
`), "plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := planner.Validate(plan, tools.Default(policy), b.PresetVars()); err != nil {
		t.Fatal(err)
	}
	res := b.RunPlan(ctx, plan)
	return res, log.all()
}

// TestEngineBatchRetriesDroppedConnections: an sshd with MaxStartups 1
// drops every connection while another one is not authenticated yet (a
// stalled one here, many hosts of a batch at once in real life). A batch
// dials those hosts again with backoff instead of failing them: all of
// them run once the stalled connection goes, and each retry is in the
// host's log. A host whose sshd keeps dropping fails with an error that
// says so.
func TestEngineBatchRetriesDroppedConnections(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "MaxStartups 1\n"})
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	hosts := dropHosts(t, d, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// One dial while the stalled connection is open: dropped, and said so.
	staller := stall(t, d.Port)
	_, err := sshtr.Dial(ctx, hosts[0].SSH, sshtr.Options{})
	if !errors.Is(err, sshtr.ErrDropped) || !strings.Contains(err.Error(), "MaxStartups") {
		t.Fatalf("dial past MaxStartups: %v, want ErrDropped naming MaxStartups", err)
	}
	t.Logf("a dropped dial: %v", err)

	// Give up fast with the sshd refusing throughout: failed, not hung.
	engine.SetDropRetry(t, 3, 10*time.Millisecond, 20*time.Millisecond)
	res, _ := runEcho(t, ctx, hosts[:1])
	if h := res.Hosts[0]; h.Status != event.HostFailed || !strings.Contains(h.Err, "MaxStartups") || !strings.Contains(h.Err, "3 attempts") {
		t.Fatalf("host with its sshd dropping every dial: %+v", h)
	}

	// The batch: four hosts at once, the stalled connection closed after
	// their first dials were dropped.
	engine.SetDropRetry(t, 10, 100*time.Millisecond, time.Second)
	go func() {
		time.Sleep(500 * time.Millisecond)
		staller.Close()
	}()
	res, evs := runEcho(t, ctx, hosts)
	retried := map[string]bool{}
	for _, ev := range evs {
		if ev.Kind == event.KindWarning && ev.Warning.LogOnly && strings.Contains(ev.Warning.Text, "dialling again") {
			retried[ev.Host] = true
		}
	}
	for _, h := range res.Hosts {
		if h.Status != event.HostOK {
			t.Errorf("%s: %+v", h.Host, h)
		}
	}
	if len(retried) == 0 {
		t.Errorf("no host was dialled again: the stalled connection did not make sshd drop any (events %s)", dump(evs))
	}
	t.Logf("hosts dialled again: %v", retried)
}
