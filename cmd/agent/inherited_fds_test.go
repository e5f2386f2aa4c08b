package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// TestStepsDoNotInheritAgentsDescriptors: agent started (as a throwaway
// user) with descriptors its parent leaked — a secret file open as fd 3,
// the write end of a pipe as fd 4 — runs a safe step that uses them
// (`cat <&3; echo INJECTED >&4`: no path is opened, so Landlock has
// nothing to check), locally with the kernel's confinement as by
// default: neither is open in the step, so nothing is read or written.
// Before keepInheritedFromSteps the step printed the secret and wrote
// into the pipe.
func TestStepsDoNotInheritAgentsDescriptors(t *testing.T) {
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	base, home, inv := otherUserScratch(t, "agent-fds-")
	other.Own(t, base)
	secretFile := filepath.Join(t.TempDir(), "leaked")
	if err := os.WriteFile(secretFile, []byte(corpustest.Secrets[2]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leaked, err := os.Open(secretFile)
	if err != nil {
		t.Fatal(err)
	}
	defer leaked.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := exec.Command(agent, "exec", "--json", "-i", inv, "--", "cat <&3; echo INJECTED >&4; ls /proc/self/fd")
	c.Env = []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(base, "state"), "XDG_CONFIG_HOME=" + filepath.Join(base, "config"),
		"PATH=/usr/local/bin:/usr/bin:/bin", "SSH_AUTH_SOCK=", "CI=true", raceEnv()}
	c.Dir = home
	c.ExtraFiles = []*os.File{leaked, w}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: other.Cred()}
	out, _ := c.CombinedOutput()
	w.Close()
	injected := make([]byte, 64)
	n, _ := r.Read(injected)
	if strings.Contains(string(out), corpustest.Secrets[2]) {
		t.Errorf("the step read agent's inherited fd 3:\n%s", out)
	}
	if n > 0 {
		t.Errorf("the step wrote %q into agent's inherited fd 4:\n%s", injected[:n], out)
	}
	if !strings.Contains(string(out), "3: Bad file descriptor") {
		t.Errorf("the step did not run, or fd 3 was open in it:\n%s", out)
	}
}
