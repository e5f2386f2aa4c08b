package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// runSSHConfig prints the settings agent will use for a host, in the format
// of `ssh -G HOST`, so they can be compared with OpenSSH's.
func runSSHConfig(_ context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("ssh-config", pflag.ContinueOnError)
	var host hostOptions
	host.addFlags(fs)
	_ = fs.MarkHidden("ssh-host") // the HOST argument names it
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent ssh-config HOST [flags]\n\nPrint the SSH settings agent uses for HOST, in the format of `ssh -G HOST`.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	mergeHost(&a.host, host, fs)
	if err := a.noBecome("ssh-config"); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("ssh-config: want exactly one HOST, got %d arguments", fs.NArg())
	}
	t, err := engine.HostTarget(fs.Arg(0), a.host.overrides())
	if err != nil {
		return err
	}
	return sshtr.WriteConfig(a.stdout, t.SSH)
}
