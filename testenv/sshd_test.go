package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// requireBinary returns the path of an OpenSSH client program; it skips
// the test when it is missing, or fails it when CI=true.
func requireBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found and CI=true: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

// scratchDir makes a directory under h's home, removed when t ends.
func scratchDir(t *testing.T, h Host) string {
	t.Helper()
	dir, err := os.MkdirTemp(h.Home, "testenv-scratch-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestSSHD(t *testing.T) {
	d := StartSSHD(t, SSHDOptions{})
	c := dial(t, d.Host)
	t.Run("exec", func(t *testing.T) { execSuite(t, d.Host, c) })
	t.Run("sftp", func(t *testing.T) { sftpSuite(t, d.Host, scratchDir(t, d.Host)) })
	if log := d.Log(); !strings.Contains(log, "Accepted publickey for "+d.User) {
		t.Errorf("log lacks the login:\n%s", log)
	}
}

func TestSSHDCloseKillsEverything(t *testing.T) {
	d := StartSSHD(t, SSHDOptions{})
	c := dial(t, d.Host)
	_, pids := startSleepers(t, c)
	var all []int
	for _, p := range tree(d.cmd.Process.Pid) {
		all = append(all, p.pid)
	}
	// listener, per-connection monitor and user processes, the session
	// shell and the two sleeps
	if len(all) < 5 {
		t.Fatalf("sshd process tree %v too small", all)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, append(all, pids...))
	if _, err := os.Stat(d.dir); !os.IsNotExist(err) {
		t.Errorf("temp dir left: %v", err)
	}
	if !strings.Contains(d.Log(), "Server listening") {
		t.Errorf("Log after Close lost the log:\n%s", d.Log())
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSSHDExtraConfig(t *testing.T) {
	d := StartSSHD(t, SSHDOptions{ExtraConfig: "MaxSessions 1\nLogLevel DEBUG1"})
	c := dial(t, d.Host)
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := c.NewSession(); err == nil {
		t.Error("second session accepted with MaxSessions 1")
	}
	if !strings.Contains(d.Log(), "debug1:") {
		t.Error("LogLevel from ExtraConfig not applied")
	}
}

func TestSSHDConfigText(t *testing.T) {
	cfg := sshdConfig(2222, "/d", "/d/hk", "/d/ak", "LogLevel=DEBUG3\nMatch User x\n  PasswordAuthentication yes")
	for _, want := range []string{"Port 2222\n", "HostKey /d/hk\n", "AuthorizedKeysFile /d/ak\n",
		"PasswordAuthentication no\n", "LogLevel=DEBUG3\n", "Match User x\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, "LogLevel VERBOSE") {
		t.Errorf("default LogLevel kept although ExtraConfig sets it:\n%s", cfg)
	}
	if strings.Index(cfg, "Match") < strings.Index(cfg, "UsePAM") {
		t.Errorf("Match block before the defaults:\n%s", cfg)
	}
}

// TestOpenSSHClient proves the generated ssh_config and known_hosts with
// the real OpenSSH client against both servers.
func TestOpenSSHClient(t *testing.T) {
	ssh := requireBinary(t, "ssh")
	hosts := map[string]func(t *testing.T) Host{
		"in-process": func(t *testing.T) Host { return StartSSHServer(t, SSHServerOptions{}).Host },
		"sshd":       func(t *testing.T) Host { return StartSSHD(t, SSHDOptions{}).Host },
	}
	for name, start := range hosts {
		t.Run(name, func(t *testing.T) {
			h := start(t)
			cmd := exec.Command(ssh, "-F", h.SSHConfig, "-o", "BatchMode=yes", h.Alias, "echo hi; echo err >&2; exit 4")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if stdout.String() != "hi\n" || cmd.ProcessState.ExitCode() != 4 || !strings.HasSuffix(stderr.String(), "err\n") {
				t.Errorf("ssh %s: %v; stdout %q stderr %q", h.Alias, err, stdout.String(), stderr.String())
			}
		})
	}
}

// TestOpenSSHSFTPClient runs OpenSSH's sftp against the in-process server:
// it uses fsync, posix-rename and realpath the way real clients do.
func TestOpenSSHSFTPClient(t *testing.T) {
	sftpBin := requireBinary(t, "sftp")
	h := StartSSHServer(t, SSHServerOptions{}).Host
	local := t.TempDir() + "/up"
	if err := os.WriteFile(local, []byte("payload"), 0o644); err != nil {
		t.Fatal(err)
	}
	batch := "pwd\nput -f " + local + " up\nrename up up2\nls\n"
	cmd := exec.Command(sftpBin, "-F", h.SSHConfig, "-o", "BatchMode=yes", "-b", "-", h.Alias)
	cmd.Stdin = strings.NewReader(batch)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sftp: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Remote working directory: "+h.Home) {
		t.Errorf("pwd not the home directory:\n%s", out)
	}
	if b, err := os.ReadFile(h.Home + "/up2"); err != nil || string(b) != "payload" {
		t.Errorf("uploaded file: %q, %v\n%s", b, err, out)
	}
}
