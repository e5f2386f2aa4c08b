package main

import (
	"context"

	sshtr "github.com/autoshell/agent/transport/ssh"
)

// runSSHConfig prints the settings agent will use for a host, in the format
// of `ssh -G HOST`, so they can be compared with OpenSSH's.
func runSSHConfig(_ context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usagef("ssh-config: want exactly one HOST, got %d arguments", len(args))
	}
	cfg, err := a.host.resolve(args[0])
	if err != nil {
		return err
	}
	return sshtr.WriteConfig(a.stdout, cfg)
}
