package engine_test

// The classifier knows the found secrets (issue 26): with the kernel
// layer off (a host without Landlock), reads of the home's dot-files not
// on the readable list and of secret-named files are rated high, so at
// default approval (only safe steps run) none of them runs and no secret
// reaches the step output the model is shown — locally and over a real
// sshd — while the benign reads still run.

import (
	"context"
	"strings"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

func classifierHoldsSecrets(t *testing.T, open func(engine.HostOptions) (*engine.Host, error)) {
	t.Helper()
	for _, mode := range []safety.Mode{safety.ModeNever, safety.ModeMedium} {
		o := engine.HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(mode, nil), Enforcement: engine.Enforcement{Off: true}}
		attacks := []string{"cat ~/.npmrc", "tr -dc a-zA-Z0-9 < ~/.npmrc | cut -c1-60", "cat ~/.pypirc", "grep -h m4rker ~/.zsh_history",
			"cat ~/deploy/prod-signing.pem", "cat ~/proj/app/.env", "head ~/.*"}
		for _, a := range attacks {
			got, _ := run(t, open, o, shellStep(a))
			if len(got) != 1 {
				t.Fatalf("%v: %q: %d steps: %s", mode, a, len(got), show(got))
			}
			st := got[0]
			if strings.Contains(st.Output, "m4rker") {
				t.Errorf("%v: a secret reached the output: %s", mode, show(got))
			}
			if st.Risk != "high" || st.Status == "ok" {
				t.Errorf("%v: %q ran or was not high: %s", mode, a, show(got))
			}
		}
	}
	o := engine.HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: engine.Enforcement{Off: true}}
	got, _ := run(t, open, o, shellStep("cat ~/.bashrc ~/.config/app/app.conf ~/proj/app/main.go"))
	if len(got) != 1 || got[0].Status != "ok" || strings.Count(got[0].Output, "benign") != 3 {
		t.Errorf("benign reads: %s", show(got))
	}
}

func TestClassifierSecretsLocal(t *testing.T) {
	localState(t)
	home := tempHome(t)
	secretsHome(t, home, "")
	t.Setenv("HOME", home)
	classifierHoldsSecrets(t, func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	})
}

func TestClassifierSecretsSSHD(t *testing.T) {
	home := tempHome(t)
	secretsHome(t, home, "")
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	classifierHoldsSecrets(t, func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	})
}
