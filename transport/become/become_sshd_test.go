package become_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/become"
	sshtr "github.com/autoshell/agent/transport/ssh"
	"github.com/autoshell/agent/transport/transporttest"
)

// dialAs logs in to d as user.
func dialAs(t *testing.T, d *testenv.SSHD, user string) transport.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := sshtr.Resolve(d.Alias, sshtr.ResolveOptions{ConfigFile: d.SSHConfig, User: user})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	if err != nil {
		t.Fatalf("dial %s as %s: %v", d.Alias, user, err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// rootDir makes a directory only root may enter, removed when t ends.
func rootDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/root", ".agent-become-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestConformanceSudoPassword is the suite through `sudo -S` with the
// password on standard input.
func TestConformanceSudoPassword(t *testing.T) {
	d, s := testenv.StartSudoSSHD(t)
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		tr, err := become.New(dialAs(t, d, s.PassUser), become.Config{Password: s.Password})
		if err != nil {
			t.Fatal(err)
		}
		return transporttest.Fixture{Transport: tr, Dir: rootDir(t), Home: "/root", Root: true}
	})
}
