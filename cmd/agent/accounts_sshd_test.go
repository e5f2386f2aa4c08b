package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// TestOtherAccountsHomesOtherUserSSHD is TestOtherAccountsHomesOtherUser
// over real OpenSSH sshd: logged in as a throwaway unprivileged user, with
// the launcher sent (its rules read the host's /etc/passwd), the level
// forced to safe and to medium (agent-run, rated so by the policy, runs a
// script the classifier never reads), a service account's secrets — at
// its home's top and below it, readable and writable by all — are not
// read, and at medium its dot-files are not written; its ordinary files
// stay readable. Judged by outcome: no marker in any event, the home
// unchanged.
func TestOtherAccountsHomesOtherUserSSHD(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	other := testenv.StartOtherShellUser(t)
	base := openDir(t, "agent-accounts-sshd-")
	home, tmp, bed := filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "bed")
	for _, d := range []string{home, filepath.Join(home, ".ssh"), tmp, bed} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(bed, 0o755)
	svcHome := serviceHome(t, "agent-svc-sshd-")
	if err := os.WriteFile(filepath.Join(bed, "agent-run"), []byte("#!/bin/sh\nexec /bin/sh \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "AuthorizedKeysFile " + filepath.Join(home, ".ssh", "authorized_keys") +
		"\nSetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + tmp + "\n"})
	b, err := os.ReadFile(d.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "authorized_keys"), ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	other.Own(t, base)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(state, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(state, "config"))
	t.Setenv("SSH_AUTH_SOCK", "")
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig, User: other.Name})
	if err != nil {
		t.Fatal(err)
	}
	enforce := engine.Enforcement{Require: true, Launcher: confinetest.Launcher(t)}

	n := 0
	script := func(body string) planner.Step {
		n++
		f := filepath.Join(bed, fmt.Sprintf("s%d.sh", n))
		if err := os.WriteFile(f, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return planner.Step{Tool: "execute_command", IgnoreErrors: true,
			Parameters: map[string]any{"command": filepath.Join(bed, "agent-run") + " " + f}}
	}
	reads, writes, benign := serviceAttacks(svcHome)
	before := corpustest.Tree(t, svcHome)
	for _, level := range []safety.Level{safety.Safe, safety.Medium} {
		p := safety.DefaultPolicy()
		p.BinDirs = append(p.BinDirs, bed)
		p.Commands["agent-run"] = safety.Rule{Level: level}
		mode := safety.DefaultMode(false)
		cmds := reads
		if level == safety.Medium {
			mode, cmds = safety.ModeMedium, append(append([]string(nil), reads...), writes...)
		}
		var steps []planner.Step
		for _, c := range append(cmds, benign) {
			steps = append(steps, script(c))
		}
		var mu sync.Mutex
		var log []event.Event
		h, err := engine.Open(context.Background(), target, engine.DialOptions{}, engine.HostOptions{Policy: p,
			Approver: safety.NewApprover(mode, nil), Enforcement: enforce,
			Emit: func(ev event.Event) { mu.Lock(); log = append(log, ev); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		h.RunPlan(ctx, &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "accounts", Steps: steps}}})
		cancel()
		h.Close()
		mu.Lock()
		var ran []*event.Step
		for _, ev := range log {
			if text := fmt.Sprintf("%+v %+v %+v", ev.Step, ev.Output, ev.Warning); strings.Contains(text, "m4rker") {
				t.Errorf("%s (kernel, over sshd): another account's secret reached an event: %.600s", level, text)
			}
			if ev.Kind == event.KindStep {
				ran = append(ran, ev.Step)
			}
		}
		mu.Unlock()
		if len(ran) != len(steps) {
			t.Fatalf("%s: %d steps ran, want %d", level, len(ran), len(steps))
		}
		for i, s := range ran[:len(cmds)] {
			if s.Risk != level.String() {
				t.Errorf("%s: %q rated %s: the level is not forced, the kernel not proven", level, cmds[i], s.Risk)
			}
		}
		if last := ran[len(ran)-1]; last.Status != "ok" || !strings.Contains(last.Output, "benign-notes") ||
			!strings.Contains(last.Output, "benign-rc") || !strings.Contains(last.Output, ".pgpass") {
			t.Errorf("%s: the account's ordinary files: %s: %.800s", level, last.Status, last.Output)
		}
	}
	corpustest.Same(t, "another account's home after the attacks over sshd", before, corpustest.Tree(t, svcHome))
}
