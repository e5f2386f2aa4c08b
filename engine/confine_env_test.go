package engine_test

// A step's environment (issue 26): it starts from an allow-list, so agent's
// own keys (OPENAI_API_KEY, AGENT_* settings) and anything else the
// operator's shell exported never reach it — locally, where the step is
// a child of agent, confined (on agent's thread, or through the launcher
// agent re-executes) or not, and over a real sshd, where agent sends no
// variable, and a confined step there loses the secret-named variables of
// the host's own login environment. PATH and HOME still work, and what
// the operator passes (safety: pass_env) reaches local steps.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// envMarker is the value of agent's secrets in these tests, printed
// reversed by the step (so that no redaction of the output hides it).
const envMarker = "envmarker4711"

func reversed(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func stepEnvSeen(t *testing.T, open func(engine.HostOptions) (*engine.Host, error), e engine.Enforcement, remote bool) {
	wantPassed := !remote
	t.Helper()
	t.Setenv("OPENAI_API_KEY", envMarker)
	t.Setenv("AGENT_API_KEY", envMarker)
	t.Setenv("DEPLOY_TOKEN", envMarker)
	t.Setenv("DEPLOY_ENVIRONMENT", "staging")
	p := safety.DefaultPolicy()
	p.PassEnv = []string{"DEPLOY_ENVIRONMENT"}
	cmd := `env | cut -d= -f1 | sort | tr '\n' ' '; echo; printenv OPENAI_API_KEY AGENT_API_KEY DEPLOY_TOKEN HOST_API_TOKEN | rev; echo "java=$JAVA_HOME"; ` +
		`echo "home=$HOME"; command -v sh; printenv DEPLOY_ENVIRONMENT; true`
	for _, tc := range []struct {
		name     string
		confined bool
		o        engine.HostOptions
	}{
		{"safe, confined", true, engine.HostOptions{Policy: p, Approver: safety.NewApprover(safety.ModeNever, nil), Enforcement: e}},
		{"approved, unconfined", !remote, engine.HostOptions{Policy: p, Approver: safety.NewApprover(safety.ModeAll, nil), Enforcement: e}},
	} {
		steps, _ := run(t, open, tc.o, shellStep(cmd))
		if len(steps) != 1 || steps[0].Risk != "safe" || steps[0].Status != "ok" {
			t.Fatalf("%s: %s", tc.name, show(steps))
		}
		out := steps[0].Output
		bad := []string{"OPENAI_API_KEY", "AGENT_API_KEY", "DEPLOY_TOKEN"}
		if tc.confined {
			// The host's own token: kept from a confined step; a step
			// run unconfined (--approve all) has the login environment
			// ssh gives.
			bad = append(bad, "HOST_API_TOKEN", reversed(envMarker), envMarker)
		}
		for _, bad := range bad {
			if strings.Contains(out, bad) {
				t.Errorf("%s: the step saw %s of agent's environment:\n%s", tc.name, bad, out)
			}
		}
		for _, good := range []string{"PATH", "HOME", "home=/", "/sh\n"} {
			if !strings.Contains(out, good) {
				t.Errorf("%s: the step lost %q:\n%s", tc.name, good, out)
			}
		}
		if got := strings.Contains(out, "staging"); got != wantPassed {
			t.Errorf("%s: pass_env DEPLOY_ENVIRONMENT reached the step: %v, want %v:\n%s", tc.name, got, wantPassed, out)
		}
	}
}

func TestStepEnvLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	stepEnvSeen(t, open, engine.Enforcement{}, false)
}

func TestStepEnvSSHD(t *testing.T) {
	needLandlock(t)
	// The host's own login environment holds a token of the account's
	// (as an exported line in a start-up file would): a confined step
	// does not see it, and sees the rest (JAVA_HOME).
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 TMPDIR=" + t.TempDir() +
		" HOST_API_TOKEN=" + envMarker + " JAVA_HOME=/opt/jdk\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	// Over SSH the step has the host's login environment: agent sends
	// none of its own, pass_env included (it is for local steps).
	stepEnvSeen(t, open, engine.Enforcement{Launcher: confinetest.Launcher(t)}, true)
	steps, _ := run(t, open, engine.HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeNever, nil),
		Enforcement: engine.Enforcement{Launcher: confinetest.Launcher(t)}}, shellStep(`echo "java=$JAVA_HOME"`))
	if len(steps) != 1 || !strings.Contains(steps[0].Output, "java=/opt/jdk") {
		t.Errorf("the host's JAVA_HOME did not reach the confined step: %s", show(steps))
	}
	// Where the kernel does not confine (here turned off, as on a host
	// without Landlock), a step nobody approved still loses the host's
	// secret-named variables; an approved one keeps them.
	// The token's length, not the token: the redactor hides the value
	// itself in every shape from the output (issue 27), and this is about
	// what reaches the step.
	cmd := `echo "its-length=${#HOST_API_TOKEN}"; echo "java=$JAVA_HOME"; echo "glob=$(echo /e*c)"; printf 'ifs=[%s]\n' "$IFS"`
	for _, tc := range []struct {
		mode safety.Mode
		seen bool
	}{{safety.ModeNever, false}, {safety.ModeAll, true}} {
		steps, _ = run(t, open, engine.HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(tc.mode, nil),
			Enforcement: engine.Enforcement{Off: true}}, shellStep(cmd))
		if len(steps) != 1 || steps[0].Status != "ok" {
			t.Fatalf("kernel off, %v: %s", tc.mode, show(steps))
		}
		out := steps[0].Output
		if got := strings.Contains(out, fmt.Sprintf("its-length=%d\n", len(envMarker))); got != tc.seen {
			t.Errorf("kernel off, %v: the host's HOST_API_TOKEN reached the step: %v, want %v:\n%s", tc.mode, got, tc.seen, out)
		}
		for _, good := range []string{"java=/opt/jdk", "glob=/etc", "ifs=[ \t\n]"} {
			if !strings.Contains(out, good) {
				t.Errorf("kernel off, %v: the step lost %q:\n%s", tc.mode, good, out)
			}
		}
	}
}
