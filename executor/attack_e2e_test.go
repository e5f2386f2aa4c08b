package executor

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	execctx "github.com/autoshell/agent/context"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// attackCorpus reads issue 13's attack corpus and the GTFOBins entries
// from package safety's testdata, aimed at home (the "/home/u" of the
// files); only entries that must be High.
func attackCorpus(t *testing.T, home string) []string {
	t.Helper()
	var cmds []string
	f, err := os.Open("../safety/testdata/attacks.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		class, cmd, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(class, "#") || strings.HasPrefix(class, "medium") {
			continue
		}
		cmds = append(cmds, strings.ReplaceAll(cmd, "/home/u", home))
	}
	b, err := os.ReadFile("../safety/testdata/gtfobins.json")
	if err != nil {
		t.Fatal(err)
	}
	var es []struct{ Code string }
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		cmds = append(cmds, strings.ReplaceAll(e.Code, "/home/u", home))
	}
	return cmds
}

// protectedHome fills a scratch home with what the attacks aim at.
func protectedHome(t *testing.T, home string) {
	t.Helper()
	for name, content := range map[string]string{
		".bashrc": "# rc\n", ".profile": "# profile\n", ".ssh/authorized_keys": "ssh-ed25519 AAAA ok\n",
		".ssh/id_rsa": "-----BEGIN PRIVATE KEY-----\n", ".aws/credentials": "[default]\n",
		".config/agent/config.yaml": "safety: {}\n", ".local/state/agent/audit.log": "{}\n",
		"important/a.txt": "keep\n", "important/x.sh": "#!/bin/sh\nrm -rf \"$HOME/important\"\n",
	} {
		p := filepath.Join(home, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
}

// snapshot records every file, directory and link under root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runAttacks runs each attack as a one-step plan, without a terminal, by
// default (safe only) and at --approve medium: every step must be denied
// and nothing under home may change.
func runAttacks(t *testing.T, tr transport.Transport, home string) {
	p := safety.DefaultPolicy()
	protectedHome(t, home)
	before := snapshot(t, home)
	state := t.TempDir()
	audit, err := safety.OpenAudit(filepath.Join(state, "audit.log"))
	must(t, err)
	t.Cleanup(func() { audit.Close() })
	cmds := attackCorpus(t, home)
	ran := 0
	for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
		e := New(Config{Transport: tr, Policy: p, Approver: safety.NewApprover(mode, nil), Audit: audit,
			Session: "attacks", Vars: execctx.New(), Emit: func(event.Event) {}})
		for _, cmd := range cmds {
			// Guard: an attack the classifier lets through is a failure
			// here, and is not run for real.
			if a := p.ClassifyCommandAt(cmd, home); a.Level != safety.High {
				t.Errorf("%q = %s, want high (not run)", cmd, a)
				continue
			}
			src, err := yaml.Marshal(map[string]any{"steps": []any{map[string]any{
				"tool": "execute_command", "parameters": map[string]any{"command": cmd}}}})
			must(t, err)
			sum, err := e.RunPlan(context.Background(), mustParse(t, string(src)))
			if err != nil || sum.Denied != 1 || sum.OK != 0 || sum.Errors != 0 {
				t.Errorf("mode %s: %q: %+v %v, want denied", mode, cmd, sum, err)
			}
			ran++
		}
	}
	after := snapshot(t, home)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q → %q", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
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
