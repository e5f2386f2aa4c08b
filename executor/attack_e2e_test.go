package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/journal"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// runAttacks runs each attack as a one-step plan, without a terminal, by
// default (safe only) and at --approve medium: every step must be denied
// and nothing under home may change.
func runAttacks(t *testing.T, tr transport.Transport, home string) {
	p := safety.DefaultPolicy()
	corpustest.Home(t, home)
	before := corpustest.Tree(t, home)
	state := t.TempDir()
	audit, err := audit.Open(filepath.Join(state, "audit.log"))
	must(t, err)
	t.Cleanup(func() { audit.Close() })
	cmds, _ := corpustest.Split(corpustest.Attacks(t, home))
	ran := 0
	for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
		// With the undo journal on, as agent runs: what it saves may lower
		// an undoable command (rm -r) to medium, never an attack.
		j, err := journal.Open(state, fmt.Sprintf("attacks-%d", mode), "h")
		must(t, err)
		e := New(Config{Transport: tr, Policy: p, Approver: safety.NewApprover(mode, nil), Audit: audit,
			Session: "attacks", Vars: execctx.New(), Emit: func(event.Event) {}, Journal: j})
		for _, cmd := range cmds {
			// Guard: an attack the classifier lets through is a failure
			// here, and is not run for real.
			if an := p.Analyze(cmd, home); an.Level != safety.High || an.IfJournaled.Level != safety.High {
				t.Errorf("%q = %s (%s once journaled), want high (not run)", cmd, an.Assessment, an.IfJournaled)
				continue
			}
			src, err := yaml.Marshal(map[string]any{"steps": []any{map[string]any{
				"tool": "execute_command", "parameters": map[string]any{"command": cmd}}}})
			must(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			sum, err := e.RunPlan(ctx, mustParse(t, string(src)))
			cancel()
			if err != nil || sum.Denied != 1 || sum.OK != 0 || sum.Errors != 0 {
				t.Errorf("mode %s: %q: %+v %v, want denied", mode, cmd, sum, err)
			}
			ran++
		}
	}
	corpustest.Same(t, "after the attacks", before, corpustest.Tree(t, home))
	t.Logf("%d attack steps denied, %d files unchanged", ran, len(before))
}

// TestAttacksDeniedLocal: issue 13's attack corpus and GTFOBins, end to
// end over the local transport, change nothing.
func TestAttacksDeniedLocal(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tr, err := local.New()
	must(t, err)
	runAttacks(t, tr, home)
}

// TestAttacksDeniedSSHD: the same over real OpenSSH sshd, whose sessions
// get a scratch HOME.
func TestAttacksDeniedSSHD(t *testing.T) {
	home := t.TempDir()
	must(t, os.Chmod(home, 0o755))
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + "\n"})
	cfg := &sshtr.HostConfig{Alias: "sshd", HostName: "127.0.0.1", Port: d.Port, User: d.User,
		IdentityFiles: []string{d.IdentityFile}, IdentitiesOnly: true, IdentityAgent: "none",
		UserKnownHostsFiles: []string{d.KnownHosts}, StrictHostKeyChecking: "yes"}
	tr, err := sshtr.Dial(context.Background(), cfg, sshtr.Options{})
	must(t, err)
	t.Cleanup(func() { tr.Close() })
	res, err := tr.Run(context.Background(), transport.Command{Command: "echo $HOME"})
	if err != nil || strings.TrimSpace(res.Stdout) != home {
		t.Fatalf("remote HOME = %q, %v; want %s", res.Stdout, err, home)
	}
	runAttacks(t, tr, home)
}
