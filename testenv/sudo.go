package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Sudo describes the local users SetupSudo makes for become tests, each
// with a sudoers entry (/etc/sudoers.d/agent-become-test):
// PassUser may run anything as anyone with its password; NoPassUser
// without one (NOPASSWD); TTYUser without one too, but sudoers says
// requiretty for it; TTYPassUser has requiretty and needs its password
// (the Password). None of them caches a sudo credential
// (timestamp_timeout=0), so every test asks sudo afresh.
type Sudo struct {
	PassUser, NoPassUser, TTYUser, TTYPassUser string
	// Password is PassUser's login and sudo password: random, made once
	// per machine and kept in a file only root can read.
	Password string
}

// Names of the sudo test users.
const (
	sudoPassUser   = "agent-become-pw"
	sudoNoPassUser = "agent-become-nopw"
	sudoTTYUser    = "agent-become-tty"
	sudoTTYPWUser  = "agent-become-ttypw"
	sudoersFile    = "/etc/sudoers.d/agent-become-test"
	sudoPassFile   = "/var/lib/agent-become-test/password"
	sudoLockFile   = "/var/lock/agent-become-test.lock"
)

const sudoersText = `# written by agent's testenv.SetupSudo for its become tests
Defaults:agent-become-pw,agent-become-nopw,agent-become-tty,agent-become-ttypw timestamp_timeout=0, !lecture
Defaults:agent-become-tty,agent-become-ttypw requiretty
agent-become-pw ALL=(ALL:ALL) ALL
agent-become-ttypw ALL=(ALL:ALL) ALL
agent-become-nopw ALL=(ALL:ALL) NOPASSWD: ALL
agent-become-tty ALL=(ALL:ALL) NOPASSWD: ALL
`

var (
	sudoOnce sync.Once
	sudoVal  *Sudo
	sudoErr  error
)

// SetupSudo makes the sudo test users (once per process; safe to run
// again and from several processes at once: it takes a lock file and
// changes only what differs). It needs root and sudo: without them the
// test is skipped, or fails when CI=true.
func SetupSudo(t testing.TB) *Sudo {
	t.Helper()
	sudoOnce.Do(func() { sudoVal, sudoErr = setupSudo() })
	if sudoErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sudo test setup with CI=true: %v", sudoErr)
		}
		t.Skipf("skipping sudo test: %v", sudoErr)
	}
	return sudoVal
}

func setupSudo() (*Sudo, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("needs root to make test users and a sudoers entry")
	}
	if _, err := exec.LookPath("sudo"); err != nil {
		return nil, errors.New("sudo is not installed (apt-get install sudo)")
	}
	lock, err := os.OpenFile(sudoLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock %s: %w", sudoLockFile, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	pw, err := sudoPassword()
	if err != nil {
		return nil, err
	}
	s := &Sudo{PassUser: sudoPassUser, NoPassUser: sudoNoPassUser, TTYUser: sudoTTYUser, TTYPassUser: sudoTTYPWUser, Password: pw}
	for _, name := range []string{s.PassUser, s.NoPassUser, s.TTYUser, s.TTYPassUser} {
		if _, err := user.Lookup(name); err != nil {
			if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", name).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("useradd %s: %v: %s", name, err, out)
			}
		}
		// sshd (UsePAM no) refuses locked accounts: every user gets a
		// password, the one sudo asks PassUser for.
		// A cheap hash: sudo checks it on every test command.
		cmd := exec.Command("chpasswd", "-c", "SHA512", "-s", "1000")
		cmd.Stdin = strings.NewReader(name + ":" + pw + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("chpasswd %s: %v: %s", name, err, out)
		}
	}
	if old, err := os.ReadFile(sudoersFile); err != nil || string(old) != sudoersText {
		if err := writeSudoers(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// sudoPassword returns the machine's test password, making it the first
// time.
func sudoPassword() (string, error) {
	if b, err := os.ReadFile(sudoPassFile); err == nil && len(strings.TrimSpace(string(b))) >= 16 {
		return strings.TrimSpace(string(b)), nil
	}
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := "Pw-" + hex.EncodeToString(b)
	if err := os.MkdirAll(filepath.Dir(sudoPassFile), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(sudoPassFile, []byte(pw+"\n"), 0o600); err != nil {
		return "", err
	}
	return pw, nil
}

// writeSudoers installs the drop-in after visudo checked it.
func writeSudoers() error {
	tmp := sudoersFile + ".tmp" // sudo ignores names with a dot
	if err := os.WriteFile(tmp, []byte(sudoersText), 0o440); err != nil {
		return fmt.Errorf("write sudoers: %w", err)
	}
	if out, err := exec.Command("visudo", "-cf", tmp).CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("visudo -cf: %v: %s", err, out)
	}
	if err := os.Rename(tmp, sudoersFile); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("install sudoers: %w", err)
	}
	return nil
}

// StartSudoSSHD starts a real sshd that also lets the sudo test users in
// with the host's client key (IdentityFile).
func StartSudoSSHD(t testing.TB) (*SSHD, *Sudo) {
	t.Helper()
	s := SetupSudo(t)
	dir, err := os.MkdirTemp("", "agent-become-keys-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// sshd reads a user's authorized keys as that user.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "authorized_keys")
	d := StartSSHD(t, SSHDOptions{ExtraConfig: fmt.Sprintf("Match User %s,%s,%s,%s\n\tAuthorizedKeysFile %s\n",
		s.PassUser, s.NoPassUser, s.TTYUser, s.TTYPassUser, keys)})
	pub, err := os.ReadFile(d.IdentityFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keys, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return d, s
}
