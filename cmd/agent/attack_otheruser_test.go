package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// TestAttackCorpusOtherUser runs a share of the attack corpus
// (safety/testdata/attacks.txt: every fifth high entry, and the safe-env
// ones) through `agent exec` as a throwaway unprivileged user in a scratch
// home, by default and at --approve medium, with agent's own keys in its
// environment, and judges the outcome: nothing under the home changed,
// no secret in what agent printed, nothing reached a UDP or TCP listener
// on 127.0.0.1:5353 (the port the corpus's network attacks aim at).
func TestAttackCorpusOtherUser(t *testing.T) {
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	base, home, inv := otherUserScratch(t, "agent-attack-other-")
	corpustest.Home(t, home)
	other.Own(t, base)
	var cmds, safe []string
	n := 0
	for _, e := range corpustest.Attacks(t, home) {
		switch {
		case e.Safe():
			safe = append(safe, e.Command)
		case e.Medium() || e.Class == "gtfobins":
		default:
			if n++; n%5 == 0 {
				cmds = append(cmds, e.Command)
			}
		}
	}
	heard := corpustest.Listen(t, "5353")
	before := corpustest.Tree(t, home)
	env := otherUserEnv(base, home)
	for _, k := range corpustest.EnvKeys {
		env = append(env, k+"="+corpustest.Secrets[len(corpustest.Secrets)-1])
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		out, code, _ := runAsOther(other, agent, env, home, args...)
		return out, code
	}
	for _, mode := range []string{"", "medium"} {
		for _, cmd := range cmds {
			args := []string{"exec", "-i", inv}
			if mode != "" {
				args = append(args, "--approve", mode)
			}
			out, code := run(append(args, "--", cmd)...)
			if code == 0 || !strings.Contains(out, "denied") {
				t.Errorf("--approve %q: %q: exit %d, want denied:\n%.600s", mode, cmd, code, out)
			}
			for _, s := range corpustest.Secrets {
				if strings.Contains(out, s) {
					t.Errorf("--approve %q: %q leaked a secret:\n%.600s", mode, cmd, out)
				}
			}
		}
	}
	for _, cmd := range safe {
		out, code := run("exec", "-i", inv, "--", cmd)
		if code != 0 {
			t.Errorf("%q: exit %d, want it run unattended:\n%.600s", cmd, code, out)
		}
		for _, s := range corpustest.Secrets {
			if strings.Contains(out, s) {
				t.Errorf("%q leaked a secret:\n%.600s", cmd, out)
			}
		}
		for _, k := range corpustest.EnvKeys {
			if strings.Contains(out, k+"=") || strings.Contains(out, k+" ") {
				t.Errorf("%q saw agent's %s:\n%.600s", cmd, k, out)
			}
		}
	}
	corpustest.Same(t, "after the corpus as another user", before, corpustest.Tree(t, home))
	if got := heard(); got != "" {
		t.Errorf("an attack reached the loopback listener: %s", got)
	}
	t.Logf("%d attacks denied as uid %d, by default and at --approve medium; %d safe-env entries ran; home unchanged, no secret out, nothing on port 5353",
		len(cmds), other.UID, len(safe))
}

// otherUserScratch is a scratch directory (prefix, under openDir) for
// agent run as another user: an empty home and, beside it, a local
// inventory (hosts.ini). The caller seeds them, then hands them to the
// user (testenv.OtherUser.Own).
func otherUserScratch(t *testing.T, prefix string) (base, home, inv string) {
	t.Helper()
	base = openDir(t, prefix)
	home = filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	inv = filepath.Join(base, "hosts.ini")
	if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return base, home, inv
}

// otherUserEnv is agent's environment as another user whose scratch home
// is home, its state and config beside it in base.
func otherUserEnv(base, home string) []string {
	return []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(base, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(base, "config"), "PATH=/usr/local/bin:/usr/bin:/bin", "SSH_AUTH_SOCK=", "CI=true", raceEnv()}
}

// runAsOther runs agent with args as other, in dir with env, and returns
// what it printed (stdout and stderr) and its exit code; err is set only
// when it could not run (an exit code is not an error).
func runAsOther(other testenv.OtherUser, agent string, env []string, dir string, args ...string) (string, int, error) {
	c := exec.Command(agent, args...)
	c.Env, c.Dir = env, dir
	c.SysProcAttr = &syscall.SysProcAttr{Credential: other.Cred()}
	out, err := c.CombinedOutput()
	if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
		return string(out), -1, fmt.Errorf("agent %s: %w", strings.Join(args, " "), err)
	}
	return string(out), c.ProcessState.ExitCode(), nil
}
