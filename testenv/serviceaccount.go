package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"syscall"
	"testing"
)

// ServiceAccountName is a throwaway service account (no password, no
// shell, no sudo) whose home a test chooses: it plays a database's or a
// CI runner's account, whose home is not under /home
// (/var/lib/postgresql), for the tests of other accounts' secrets.
const ServiceAccountName = "agent-svc-home"

// StartServiceAccount makes ServiceAccountName (once per machine) and
// points its home at home for the test (usermod -d), back to
// /nonexistent at its end; the test holds the account alone meanwhile
// (an flock beside the one StartOtherUser takes). It needs root: without
// it the test is skipped, or fails when CI=true.
func StartServiceAccount(t testing.TB, home string) OtherUser {
	t.Helper()
	u, err := serviceAccount(t, home)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("service-account test setup with CI=true: %v", err)
		}
		t.Skipf("skipping service-account test: %v", err)
	}
	return u
}

func serviceAccount(t testing.TB, home string) (OtherUser, error) {
	if os.Geteuid() != 0 {
		return OtherUser{}, fmt.Errorf("needs root to make a throwaway account")
	}
	u, err := setupUser(ServiceAccountName, "/usr/sbin/nologin")
	if err != nil {
		return OtherUser{}, err
	}
	lock, err := os.OpenFile(sudoLockFile+".svc", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return OtherUser{}, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return OtherUser{}, fmt.Errorf("lock: %w", err)
	}
	t.Cleanup(func() {
		exec.Command("usermod", "-d", "/nonexistent", ServiceAccountName).Run()
		lock.Close() // releases the flock
	})
	if out, err := exec.Command("usermod", "-d", home, ServiceAccountName).CombinedOutput(); err != nil {
		return OtherUser{}, fmt.Errorf("usermod -d %s: %v: %s", home, err, out)
	}
	if got, err := user.Lookup(ServiceAccountName); err != nil || got.HomeDir != home {
		return OtherUser{}, fmt.Errorf("%s's home is not %s after usermod: %v", ServiceAccountName, home, err)
	}
	return u, nil
}
