package engine_test

// Secrets found, not listed (issue 26): with the level forced to safe
// (the step runs agent-run, a program the policy rates safe, on a script
// the classifier never reads), the kernel alone keeps a step from the
// home's dot-files that are not on the readable list (~/.npmrc, ~/.pypirc,
// ~/.zsh_history), from a key not named id_* and from a .env that
// `grep -r` meets — locally and over a real sshd — while the benign reads
// (cat ~/.bashrc, ls ~, grep -r in /etc) still work.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// forcedBed is a bin directory the policy trusts holding agent-run, which
// runs a script file with sh, rated at the level the test forces.
type forcedBed struct{ bin, scripts string }

func newForcedBed(t *testing.T) forcedBed {
	t.Helper()
	dir := t.TempDir()
	b := forcedBed{bin: filepath.Join(dir, "bin"), scripts: filepath.Join(dir, "scripts")}
	for _, d := range []string{b.bin, b.scripts} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(b.bin, "agent-run"), []byte("#!/bin/sh\nexec /bin/sh \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b forcedBed) policy(l safety.Level) safety.Policy {
	p := safety.DefaultPolicy()
	p.BinDirs = append(p.BinDirs, b.bin)
	p.Commands["agent-run"] = safety.Rule{Level: l}
	return p
}

// step writes script to a file of its own and returns the step running it.
func (b forcedBed) step(t *testing.T, script string) planner.Step {
	t.Helper()
	f, err := os.CreateTemp(b.scripts, "s-*.sh")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(script + "\n")
	f.Close()
	st := shellStep(filepath.Join(b.bin, "agent-run") + " " + f.Name())
	st.IgnoreErrors = true
	return st
}

// secretsHome makes the scratch home's secrets (each holding marker) and
// benign files; work is a directory outside the home, or "" for none.
func secretsHome(t *testing.T, home, work string) {
	t.Helper()
	for name, content := range map[string]string{
		".npmrc": "//registry.npmjs.org/:_authToken=m4rker-npm\n", ".pypirc": "[pypi]\npassword = m4rker-pypi\n",
		".zsh_history": ": 1:0;mysql -pm4rker-hist\n", "deploy/prod-signing.pem": "m4rker-pem\n",
		"proj/app/.env": "DB=m4rker-env\n", "proj/app/main.go": "package main // benign\n",
		".bashrc": "# benign rc\n", ".config/app/app.conf": "level = benign\n",
		// Session 13: credentials that were outside the lists (plain
		// markers: the redactor would hide a password-shaped one anyway).
		".config/pip/pip.conf":                     "# m4rker-pip\n",
		".config/containers/auth.json":             `{"auths":{"r.example":{"auth":"m4rker-podman"}}}`,
		".config/nushell/history.txt":              "echo m4rker-nu\n",
		".local/state/bash/history":                "echo m4rker-xdg\n",
		".config/google-chrome/Default/Login Data": "m4rker-chrome\n", "ops/vault_pass.txt": "m4rker-vault\n",
	} {
		mkfileT(t, filepath.Join(home, name), content)
	}
	if work != "" {
		mkfileT(t, filepath.Join(work, "svc", ".env.production"), "TOKEN=m4rker-work\n")
		mkfileT(t, filepath.Join(work, "svc", "README"), "benign readme\n")
	}
}

func mkfileT(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func secretsHeld(t *testing.T, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement, grepDir string) {
	t.Helper()
	b := newForcedBed(t)
	for _, l := range []safety.Level{safety.Safe, safety.Medium} {
		mode := safety.ModeNever
		if l == safety.Medium {
			mode = safety.ModeMedium
		}
		o := engine.HostOptions{Policy: b.policy(l), Approver: safety.NewApprover(mode, nil), Enforcement: e}
		attacks := []string{"cat ~/.npmrc", "cat ~/.pypirc", "cat ~/.zsh_history", "cat ~/deploy/prod-signing.pem",
			"cd ~/proj && grep -r m4rker .", "cd " + grepDir + " && grep -r m4rker .",
			"cat ~/.config/pip/pip.conf ~/.config/containers/auth.json ~/.config/nushell/history.txt " +
				"~/.local/state/bash/history ~/.config/google-chrome/Default/'Login Data' ~/ops/vault_pass.txt; grep -rs m4rker ~/.config ~/.local ~/ops"}
		var steps []planner.Step
		for _, a := range attacks {
			steps = append(steps, b.step(t, a))
		}
		got, _ := run(t, open, o, steps...)
		if len(got) != len(attacks) {
			t.Fatalf("%s: %d steps ran, want %d: %s", l, len(got), len(attacks), show(got))
		}
		for i, st := range got {
			if strings.Contains(st.Output, "m4rker") || st.Risk != l.String() {
				t.Errorf("%s: %q read a secret: %s", l, attacks[i], show([]*event.Step{st}))
			}
			if i < 4 && !strings.Contains(st.Output, "blocked: read of ~/") {
				t.Errorf("%s: %q was not explained as a blocked read: %s", l, attacks[i], show([]*event.Step{st}))
			}
		}
	}
	// Benign reads at safe, the level forced as well.
	o := engine.HostOptions{Policy: b.policy(safety.Safe), Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: e}
	got, _ := run(t, open, o, b.step(t, "cat ~/.bashrc ~/.config/app/app.conf ~/proj/app/main.go && ls -a ~ && "+
		"{ cd "+grepDir+" && grep -rhs benign .; true; } && grep -rls localhost /etc | head -1"))
	if len(got) != 1 || got[0].Status != "ok" || strings.Count(got[0].Output, "benign") < 4 || !strings.Contains(got[0].Output, ".npmrc") ||
		!strings.Contains(got[0].Output, "/etc/") {
		t.Errorf("benign reads: %s", show(got))
	}
}

func TestSecretsFoundLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home, work := tempHome(t), t.TempDir()
	secretsHome(t, home, work)
	open := localHomeOpener(t, home)
	t.Chdir(work) // the working directory is walked too
	secretsHeld(t, open, engine.Enforcement{}, work)
}

func TestSecretsFoundSSHD(t *testing.T) {
	needLandlock(t)
	home := tempHome(t)
	secretsHome(t, home, "")
	open, e := sshdHomeOpener(t, home)
	secretsHeld(t, open, e, home+"/proj")
}
