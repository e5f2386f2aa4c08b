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
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// TestAttackCorpusOtherUserSSHD runs TestAttackCorpusOtherUser's share of
// the corpus (every fifth high entry of attacks.txt, and the safe-env
// ones) through the engine over real OpenSSH sshd, logged in as a
// throwaway unprivileged user (its key in its scratch home's
// authorized_keys; agent's keys in this side's environment and in the
// login's, through sshd's SetEnv): with the kernel's confinement (the
// launcher sent) and without, by default and at --approve medium, every
// attack denied; the safe-env entries run and show no key; the corpus's
// medium entries, each run in its own session at --approve medium (half
// with the kernel, half without) and then undone, change only files a medium step
// may change, and agent undo puts them back byte for byte and mode for
// mode. Judged by outcome: the home's tree, no secret in any event,
// nothing on 127.0.0.1:5353.
func TestAttackCorpusOtherUserSSHD(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	other := testenv.StartOtherShellUser(t)
	base := openDir(t, "agent-attack-sshd-")
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	corpustest.ToolHome(t, home, nil) // with ~/work's links into protected places
	secret := corpustest.Secrets[len(corpustest.Secrets)-1]
	keys := ""
	for _, k := range corpustest.EnvKeys {
		keys += " " + k + "=" + secret
		t.Setenv(k, secret) // agent's own: never sent
	}
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "AuthorizedKeysFile " + filepath.Join(home, ".ssh", "authorized_keys") +
		"\nSetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + tmp + keys + "\n"})
	// The test's key, authorized in the throwaway user's home (sshd reads
	// the file as that user).
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
	launcher := confinetest.Launcher(t)

	p := safety.DefaultPolicy()
	var high, safe []string
	var medium []corpustest.Entry
	n := 0
	for _, e := range corpustest.Attacks(t, home) {
		switch {
		case e.Safe():
			safe = append(safe, e.Command)
		case e.Class == "gtfobins":
		case e.Medium():
			if an := p.Analyze(e.Command, home); an.IfJournaled.Level == safety.Medium {
				medium = append(medium, e) // run at --approve medium
			}
		default:
			if n++; n%5 != 0 {
				continue
			}
			if an := p.Analyze(e.Command, home); an.Level != safety.High || an.IfJournaled.Level != safety.High {
				t.Errorf("%q = %s (%s once journaled), want high (not run)", e.Command, an.Assessment, an.IfJournaled)
				continue
			}
			high = append(high, e.Command)
		}
	}
	heard := corpustest.Listen(t, "5353")
	own := filepath.Join(home, ".local", "state", "agent", "launch") // the launcher and its rules: agent's own
	tree := func() map[string]string {
		tr := corpustest.Tree(t, home)
		for p := range tr {
			if p == own || strings.HasPrefix(p, own+"/") {
				delete(tr, p)
			}
		}
		return tr
	}
	before := tree()
	var mu sync.Mutex
	// steps runs cmds in one session and returns the host's name and the
	// session's id (for undo).
	steps := func(o engine.HostOptions, cmds []string, each func(cmd string, s *event.Step)) (string, string) {
		o.Policy = p
		var log []event.Event
		o.Emit = func(ev event.Event) { mu.Lock(); log = append(log, ev); mu.Unlock() }
		h, err := engine.Open(context.Background(), target, engine.DialOptions{}, o)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		for _, cmd := range cmds {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			mu.Lock()
			seen := len(log)
			mu.Unlock()
			h.RunPlan(ctx, &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "attack", Steps: []planner.Step{
				{Tool: "execute_command", Parameters: map[string]any{"command": cmd}}}}}})
			cancel()
			mu.Lock()
			evs := append([]event.Event(nil), log[seen:]...)
			mu.Unlock()
			var st *event.Step
			for _, ev := range evs {
				text := fmt.Sprintf("%+v %+v %+v", ev.Step, ev.Output, ev.Warning)
				for _, s := range corpustest.Secrets {
					if strings.Contains(text, s) {
						t.Errorf("%q showed a secret: %.400s", cmd, text)
					}
				}
				if ev.Kind == event.KindStep {
					st = ev.Step
				}
				if ev.Kind == event.KindWarning && !o.Enforcement.Off && strings.Contains(ev.Warning.Text, "enforced") {
					t.Errorf("kernel on: %s", ev.Warning.Text)
				}
			}
			if st == nil {
				t.Errorf("%q: no step event", cmd)
				continue
			}
			each(cmd, st)
		}
		return h.Name, h.Session
	}
	for _, kernel := range []string{"on", "off"} {
		e := engine.Enforcement{Off: kernel == "off", Launcher: launcher}
		for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
			name := fmt.Sprintf("as %s over sshd, kernel %s, --approve %s", other.Name, kernel, mode)
			denied := 0
			steps(engine.HostOptions{Approver: safety.NewApprover(mode, nil), Enforcement: e}, high, func(cmd string, s *event.Step) {
				if s.Status != "denied" {
					t.Errorf("%s: %q: %s (%s), want denied: %.300s", name, cmd, s.Status, s.Risk, s.Output)
					return
				}
				denied++
			})
			corpustest.Same(t, name, before, tree())
			t.Logf("%s: %d/%d attacks denied", name, denied, len(high))
		}
		ran := 0
		steps(engine.HostOptions{Approver: safety.NewApprover(safety.DefaultMode(false), nil), Enforcement: e}, safe, func(cmd string, s *event.Step) {
			if s.Status != "ok" {
				t.Errorf("kernel %s: %q: %s, want it run: %.300s", kernel, cmd, s.Status, s.Output)
			}
			ran++
			for _, k := range corpustest.EnvKeys {
				if strings.Contains(s.Output, k+"=") || strings.Contains(s.Output, k+" ") || strings.Contains(s.Output, "REDACTED") {
					t.Errorf("kernel %s: %q saw %s: %.300s", kernel, cmd, k, s.Output)
				}
			}
		})
		t.Logf("kernel %s: %d safe-env entries ran, no key seen", kernel, ran)
	}
	// The medium entries for real, as the throwaway user, kernel on and
	// off, each in its own session and then undone: only files a medium
	// step may change changed, and agent undo put them back.
	stateDir, err := statedir.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, kernel := range []string{"on", "off"} {
		e := engine.Enforcement{Require: kernel == "on", Off: kernel == "off", Launcher: launcher}
		what := fmt.Sprintf("as %s over sshd, kernel %s, --approve medium", other.Name, kernel)
		counts := tally{}
		// one connection undoes every entry's session: a login per entry
		// was a third of the loop's CPU (sshd's key exchange)
		var undoTr transport.Transport
		defer func() {
			if undoTr != nil {
				undoTr.Close()
			}
		}()
		for i, me := range medium {
			cmd := me.Command
			if (kernel == "off") != (i%2 == 1) {
				continue // half with the kernel, half without: each entry once, the test short
			}
			corpustest.ResetWork(t, home) // what one entry left is not the next's
			other.Own(t, home)
			o := mediumOutcome{home: home, before: tree()}
			var said string
			name, session := steps(engine.HostOptions{Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: e},
				[]string{cmd}, func(cmd string, s *event.Step) { said = fmt.Sprintf("%s (%s): %s", s.Status, s.Risk, s.Output) })
			o.ran = tree()
			o.undone = o.ran
			if len(corpustest.Changed(o.before, o.ran)) > 0 {
				if undoTr == nil {
					if undoTr, err = engine.Dial(context.Background(), target, engine.DialOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				acts, err := engine.Undo(context.Background(), undoTr, stateDir, session, name, false, nil)
				said += fmt.Sprintf("\nundo: %v %v", acts, err)
				o.undone = tree()
			}
			ch, harm := o.judge(t, what, cmd, said)
			counts.add(me.Class, false, ch, harm)
		}
		t.Logf("%s: %s", what, counts)
	}
	if got := heard(); got != "" {
		t.Errorf("an attack reached the loopback listener: %s", got)
	}
	t.Logf("%d attacks, %d safe-env and %d medium entries over sshd as uid %d", len(high), len(safe), len(medium), other.UID)
}
