package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// OtherUserName is the throwaway unprivileged user OtherUser makes: no
// sudo, no password, no home; it plays another local user of the machine.
const OtherUserName = "agent-other-uid"

// OtherUser is another local user for attack tests.
type OtherUser struct {
	Name     string
	UID, GID uint32
}

// Cred is the credential a child process runs as this user with.
func (u OtherUser) Cred() *syscall.Credential {
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
}

var (
	otherOnce sync.Once
	otherVal  OtherUser
	otherErr  error

	shellOnce sync.Once
	shellVal  OtherUser
	shellErr  error
)

// OtherShellUserName is a second throwaway unprivileged user, made by
// StartOtherShellUser: /bin/sh as its shell (sshd runs a login's commands
// through it; OtherUserName's is nologin), "*" as its password (no
// password logs in, but the account is not locked: sshd without PAM
// refuses a locked one even a key), no sudo, no home.
const OtherShellUserName = "agent-other-sh"

// StartOtherShellUser makes (once per machine) OtherShellUserName, as
// StartOtherUser does OtherUserName: an unprivileged user an SSH server
// can log in as with a key.
func StartOtherShellUser(t testing.TB) OtherUser {
	t.Helper()
	shellOnce.Do(func() { shellVal, shellErr = setupUser(OtherShellUserName, "/bin/sh") })
	if shellErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("other-user test setup with CI=true: %v", shellErr)
		}
		t.Skipf("skipping other-user test: %v", shellErr)
	}
	return shellVal
}

// StartOtherUser makes (once per machine; safe from several processes at
// once) the throwaway user OtherUserName. It needs root: without it the
// test is skipped, or fails when CI=true.
func StartOtherUser(t testing.TB) OtherUser {
	t.Helper()
	otherOnce.Do(func() { otherVal, otherErr = setupUser(OtherUserName, "/usr/sbin/nologin") })
	if otherErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("other-user test setup with CI=true: %v", otherErr)
		}
		t.Skipf("skipping other-user test: %v", otherErr)
	}
	return otherVal
}

func setupUser(name, shell string) (OtherUser, error) {
	if os.Geteuid() != 0 {
		return OtherUser{}, errors.New("needs root to make a throwaway user")
	}
	lock, err := os.OpenFile(sudoLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return OtherUser{}, fmt.Errorf("lock file: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return OtherUser{}, fmt.Errorf("lock %s: %w", sudoLockFile, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "-M", "-d", "/nonexistent", "-s", shell, name).CombinedOutput(); err != nil {
			return OtherUser{}, fmt.Errorf("useradd %s: %v: %s", name, err, out)
		}
		if u, err = user.Lookup(name); err != nil {
			return OtherUser{}, err
		}
		if shell != "/usr/sbin/nologin" {
			if out, err := exec.Command("usermod", "-p", "*", name).CombinedOutput(); err != nil {
				return OtherUser{}, fmt.Errorf("usermod -p '*' %s: %v: %s", name, err, out)
			}
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil || uid == 0 {
		return OtherUser{}, fmt.Errorf("user %s: uid %s gid %s: %v", name, u.Uid, u.Gid, err)
	}
	return OtherUser{Name: name, UID: uint32(uid), GID: uint32(gid)}, nil
}

// Own makes u the owner of root and everything below it (links
// themselves, not what they point to), as a scratch home the user runs
// agent in must be.
func (u OtherUser) Own(t testing.TB, root string) {
	t.Helper()
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(u.UID), int(u.GID))
	})
	if err != nil {
		t.Fatal(err)
	}
}
