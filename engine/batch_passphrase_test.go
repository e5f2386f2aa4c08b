package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
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

// countingPrompter answers every passphrase question with pass and
// counts them.
type countingPrompter struct {
	mu    sync.Mutex
	pass  string
	asked int
}

func (p *countingPrompter) Confirm(context.Context, string) (bool, error) { return false, nil }

func (p *countingPrompter) Passphrase(context.Context, string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	time.Sleep(50 * time.Millisecond) // a person typing: the other hosts wait meanwhile
	return []byte(p.pass), nil
}

// TestEngineBatchPassphraseOnce: six inventory hosts (aliases of one real
// sshd) reached with an encrypted key, three at a time: the passphrase is
// asked once for the batch, not once per host.
func TestEngineBatchPassphraseOnce(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "MaxStartups 200\n"})
	key, err := os.ReadFile(d.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	enc := writeFile(t, "id_enc", string(key))
	if err := os.Chmod(enc, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-p", "-a", "1", "-N", "batch-pass", "-f", enc).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -p: %v: %s", err, out)
	}
	kh, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := writeFile(t, "known_hosts", string(kh))
	sshConfig := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host *\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.User, enc, knownHosts))
	localState(t)
	var inv strings.Builder
	inv.WriteString("[web]\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&inv, "w%d ansible_host=127.0.0.1 ansible_port=%d\n", i, d.Port)
	}
	hosts, err := engine.SelectHosts(engine.InventorySpec{Sources: []string{writeFile(t, "hosts", inv.String())}}, "", engine.SSHOverrides{ConfigFile: sshConfig})
	if err != nil {
		t.Fatal(err)
	}
	p := &countingPrompter{pass: "batch-pass"}
	policy := safety.DefaultPolicy()
	var log eventLog
	b, err := engine.OpenBatch(engine.BatchOptions{
		Hosts: hosts, Forks: 3, Policy: policy, Emit: log.Emit,
		Approver: safety.NewApprover(safety.ModeAll, nil, safety.WithScope(safety.ScopeBatch)),
		Dial:     engine.DialOptions{SSH: sshtr.Options{Prompter: p}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	plan, err := planner.Parse(strings.NewReader("phases:\n  - phase: 1\n    goal: g\n    steps:\n      - tool: execute_command\n        parameters:\n          command: echo hi\n"), "plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := planner.Validate(plan, tools.Default(policy), b.PresetVars()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := b.RunPlan(ctx, plan)
	for _, hr := range res.Hosts {
		if hr.Status != event.HostOK {
			t.Errorf("%s: %+v", hr.Host, hr)
		}
	}
	if p.asked != 1 {
		t.Errorf("passphrase asked %d times for %d hosts, want once", p.asked, len(hosts))
	}
}
