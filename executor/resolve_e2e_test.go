package executor

import (
	"context"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// linkAttacks reach protected files through symbolic links already on
// the host (linkedHome): the classifier alone rates them below High.
var linkAttacks = []string{
	"echo evil >> ~/x",
	"cat ~/y",
	"head -c 64 < ~/y",
	"cat ~/d/sub/x",
	"cd ~/d && echo k >> authorized_keys",
	"echo k >> ~/u/../authorized_keys",
	"cat ~/rel",
	"cat ~/chain1",
	"grep -r BEGIN ~/d",
	"echo x >> ~/cfg/agent/config.yaml",
	"mkdir -p ~/d/new",
	"cp ~/plain.txt ~/dangling",
	"echo x > ~/loop",
	"truncate -s 0 ~/x",
	"echo evil | tee ~/lk/*.txt",
	"chmod 644 ~/lk/r*", // 666 is high anywhere: 644 proves the link is followed
	"touch ~/lk/.*",
}

// hostsUnderTest are the local transport and a real OpenSSH sshd whose
// sessions get home as HOME; each gives a transport and the home it acts in.
func hostsUnderTest(t *testing.T) map[string]func() (transport.Transport, string) {
	return map[string]func() (transport.Transport, string){
		"local": func() (transport.Transport, string) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			tr, err := local.New()
			must(t, err)
			return tr, home
		},
		"sshd": func() (transport.Transport, string) {
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
			return tr, home
		},
	}
}

// Each attack through a link already on the host, as a one-step plan
// without a terminal, by default and at --approve medium, is denied and
// changes nothing; the classifier alone would have let each through at
// one of them.
func TestLinkAttacksDenied(t *testing.T) {
	for name, open := range hostsUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			tr, home := open()
			linkedHome(t, home)
			before := corpustest.Tree(t, home)
			p := safety.DefaultPolicy()
			for _, cmd := range linkAttacks {
				if a := p.ClassifyCommandAt(cmd, home); a.Level == safety.High {
					t.Errorf("%q is High without the host's links: not a link attack", cmd)
				}
			}
			for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
				e := New(Config{Transport: tr, Policy: p, Approver: safety.NewApprover(mode, nil),
					Session: "links", Vars: execctx.New(), Emit: func(event.Event) {}})
				for _, cmd := range linkAttacks {
					src, err := yaml.Marshal(map[string]any{"steps": []any{map[string]any{
						"tool": "execute_command", "parameters": map[string]any{"command": cmd}}}})
					must(t, err)
					sum, err := e.RunPlan(context.Background(), mustParse(t, string(src)))
					if err != nil || sum.Denied != 1 || sum.OK != 0 || sum.Errors != 0 {
						t.Errorf("mode %s: %q: %+v %v, want denied", mode, cmd, sum, err)
					}
				}
			}
			corpustest.Same(t, "after the link attacks", before, corpustest.Tree(t, home))
		})
	}
}

// A link an earlier step of the same plan made is on the host when a
// later step is classified: step 1 (a person approved it) links ~/k to
// the key, step 2 reads ~/k and must be asked about as High, not run as
// safe. A read through a link to a plain file still runs unasked.
func TestLinkFromEarlierStep(t *testing.T) {
	for name, open := range hostsUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			tr, home := open()
			linkedHome(t, home)
			os.Remove(home + "/k")
			var asked []safety.Request
			prompter := safety.PrompterFunc(func(_ context.Context, req safety.Request) (safety.Decision, error) {
				asked = append(asked, req)
				ok := strings.HasPrefix(req.Command, "ln -s")
				return safety.Decision{Allowed: ok, Asked: true, By: safety.ByUser, Reason: "test"}, nil
			})
			var outputs []string
			e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAsk, prompter),
				Session: "links", Vars: execctx.New(), Emit: func(ev event.Event) {
					if ev.Step != nil {
						outputs = append(outputs, ev.Step.Output)
					}
				}})
			plan := `steps:
  - tool: execute_command
    parameters: {command: "ln -s ~/.ssh/id_rsa ~/k && ln -s ~/plain.txt ~/q"}
  - tool: execute_command
    parameters: {command: "cat ~/k"}
`
			sum, err := e.RunPlan(context.Background(), mustParse(t, plan))
			if err != nil {
				t.Fatal(err)
			}
			if sum.OK != 1 || sum.Denied != 1 {
				t.Errorf("summary %+v, want step 1 ok, step 2 denied", sum)
			}
			sum, err = e.RunPlan(context.Background(), mustParse(t, "steps:\n  - tool: execute_command\n    parameters: {command: \"cat ~/q\"}\n"))
			if err != nil || sum.OK != 1 || !strings.Contains(strings.Join(outputs, "\n"), "plain") {
				t.Errorf("cat ~/q (a link to a plain file): %+v %v, outputs %q; want it run unasked", sum, err, outputs)
			}
			if len(asked) != 2 || asked[1].Command != "cat ~/k" || asked[1].Risk.Level != safety.High {
				t.Fatalf("asked %+v, want step 1, then step 2 as High", asked)
			}
			if !strings.Contains(strings.Join(asked[1].Risk.Reasons, "\n"), home+"/.ssh/id_rsa") {
				t.Errorf("step 2's reasons %q do not say where ~/k leads", asked[1].Risk.Reasons)
			}
			for _, o := range outputs {
				if strings.Contains(o, "PRIVATE KEY") {
					t.Errorf("the key was read: %q", o)
				}
			}
		})
	}
}
