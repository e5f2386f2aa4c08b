package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// TestBecomeFlagsSSHD: the become flags and the config's become section
// over real sshd: `agent exec -b` runs as root, --become-user as that
// user, the config's become section like the flags; sudo wanting a
// password without -K (also with requiretty) is a quick, clear host
// error, requiretty alone is not (sudo gets a pty), not a hang; -K without a terminal, a method other than
// sudo and become flags on commands that run nothing are usage errors
// naming them.
func TestBecomeFlagsSSHD(t *testing.T) {
	d, su := testenv.StartSudoSSHD(t)
	tmp := t.TempDir()
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	cfg := filepath.Join(tmp, "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host *\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 10\n",
		d.Port, d.IdentityFile, d.KnownHosts)), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := func(args ...string) (string, string, int) {
		t.Helper()
		return runAgent(append([]string{"-F", cfg}, args...)...)
	}
	host := func(user string) string { return user + "@web" }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ssh-host", host(su.NoPassUser), "-b", "exec", "--", "id -un"}, "root\n"},
		{[]string{"--ssh-host", host(su.NoPassUser), "--become", "--become-user", "nobody", "exec", "--", "id -un"}, "nobody\n"},
		{[]string{"--ssh-host", host(su.NoPassUser), "exec", "--", "id -un"}, su.NoPassUser + "\n"},
		// sudoers requiretty: sudo runs under a pty agent gives it.
		{[]string{"--ssh-host", host(su.TTYUser), "-b", "exec", "--", "id -un"}, "root\n"},
	} {
		out, errOut, code := agent(c.args...)
		if code != 0 || out != c.want {
			t.Errorf("%q: exit %d stdout %q (want %q) stderr %s", c.args, code, out, c.want, errOut)
		}
	}

	// A sudo that needs what it cannot get fails the host, quickly.
	for _, c := range []struct {
		user, want string
	}{
		{su.PassUser, "password"},
		{su.TTYPassUser, "password"},
	} {
		start := time.Now()
		_, errOut, code := agent("--ssh-host", host(c.user), "-b", "exec", "--", "id -un")
		if code != 255 || !strings.Contains(strings.ToLower(errOut), c.want) || !strings.Contains(errOut, "become") {
			t.Errorf("%s: exit %d stderr %q, want 255 and an error about %s", c.user, code, errOut, c.want)
		}
		if el := time.Since(start); el > 30*time.Second {
			t.Errorf("%s: sudo's refusal took %s", c.user, el)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ssh-host", host(su.PassUser), "-b", "-K", "exec", "--", "id"}, "--ask-become-pass needs a terminal"},
		{[]string{"--ssh-host", host(su.NoPassUser), "-b", "--become-method", "su", "exec", "--", "id"}, `"su"`},
		{[]string{"-b", "ssh-config", "web"}, "--become"},
		{[]string{"inventory", "list", "-i", cfg, "--become-user", "x"}, "--become-user"},
	} {
		_, errOut, code := agent(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d stderr %q, want 2 naming %s", c.args, code, errOut, c.want)
		}
	}

	// The config file's become section acts like the flags.
	conf := filepath.Join(tmp, "config", "agent", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("become:\n  enabled: true\n  user: nobody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := agent("--ssh-host", host(su.NoPassUser), "exec", "--", "id -un"); code != 0 || out != "nobody\n" {
		t.Errorf("config become section: exit %d stdout %q stderr %s", code, out, errOut)
	}
	if err := os.WriteFile(conf, []byte("become:\n  method: doas\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := agent("--ssh-host", host(su.NoPassUser), "exec", "--", "id -un"); code != 2 || !strings.Contains(errOut, "doas") {
		t.Errorf("config become method doas: exit %d stderr %q", code, errOut)
	}
}
