package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/testenv"
)

// LocalHost is this machine through the local transport, working in a new
// temporary directory. close removes it.
func LocalHost() (h Host, close func() error, err error) {
	dir, err := os.MkdirTemp("", "llmbench-local-")
	if err != nil {
		return h, nil, err
	}
	tr, err := engine.Dial(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{})
	if err != nil {
		os.RemoveAll(dir)
		return h, nil, fmt.Errorf("local transport: %w", err)
	}
	return Host{Name: "local", Transport: tr, Dir: dir}, func() error {
		return errors.Join(tr.Close(), os.RemoveAll(dir))
	}, nil
}

// SSHHost is the in-process SSH/SFTP server of testenv, reached through
// the real SSH transport (host key checked against its known_hosts file),
// working in the server's home directory. close closes both.
func SSHHost(ctx context.Context) (h Host, close func() error, err error) {
	srv, err := testenv.NewSSHServer(testenv.SSHServerOptions{})
	if err != nil {
		return h, nil, err
	}
	t, err := engine.HostTarget(srv.Alias, engine.SSHOverrides{ConfigFile: srv.SSHConfig})
	if err != nil {
		srv.Close()
		return h, nil, err
	}
	tr, err := engine.Dial(ctx, t, engine.DialOptions{})
	if err != nil {
		srv.Close()
		return h, nil, err
	}
	return Host{Name: "ssh", Transport: tr, Dir: srv.Home}, func() error {
		return errors.Join(tr.Close(), srv.Close())
	}, nil
}
