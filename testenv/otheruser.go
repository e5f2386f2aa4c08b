package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
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
)

// StartOtherUser makes (once per machine; safe from several processes at
// once) the throwaway user OtherUserName. It needs root: without it the
// test is skipped, or fails when CI=true.
func StartOtherUser(t testing.TB) OtherUser {
	t.Helper()
	otherOnce.Do(func() { otherVal, otherErr = setupOtherUser() })
	if otherErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("other-user test setup with CI=true: %v", otherErr)
		}
		t.Skipf("skipping other-user test: %v", otherErr)
	}
	return otherVal
}

func setupOtherUser() (OtherUser, error) {
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
	u, err := user.Lookup(OtherUserName)
	if err != nil {
		if out, err := exec.Command("useradd", "-M", "-d", "/nonexistent", "-s", "/usr/sbin/nologin", OtherUserName).CombinedOutput(); err != nil {
			return OtherUser{}, fmt.Errorf("useradd %s: %v: %s", OtherUserName, err, out)
		}
		if u, err = user.Lookup(OtherUserName); err != nil {
			return OtherUser{}, err
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil || uid == 0 {
		return OtherUser{}, fmt.Errorf("user %s: uid %s gid %s: %v", OtherUserName, u.Uid, u.Gid, err)
	}
	return OtherUser{Name: OtherUserName, UID: uint32(uid), GID: uint32(gid)}, nil
}
