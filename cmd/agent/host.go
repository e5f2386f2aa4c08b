package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/transport"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// hostOptions select the target host and override ~/.ssh/config, like ssh's
// own flags.
type hostOptions struct {
	sshHost    string
	configFile string
	user       string
	port       int
	identities []string
	// noControlMaster: --no-control-master, ssh's -o ControlPath=none.
	noControlMaster bool
	become          becomeFlags
}

func (o *hostOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.sshHost, "ssh-host", "", "run on `HOST` over SSH (a Host from ~/.ssh/config, [user@]host or ssh://user@host:port); default: this machine")
	fs.StringVarP(&o.configFile, "ssh-config", "F", "", "read SSH settings from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config")
	fs.StringVarP(&o.user, "user", "l", "", "remote `USER` (overrides the config file)")
	fs.IntVarP(&o.port, "port", "p", 0, "remote `PORT` (overrides the config file)")
	// -i is the inventory (as in Ansible); the key file is --identity only.
	fs.StringArrayVar(&o.identities, "identity", nil, "private key `FILE` to try first (repeatable; ssh's -i)")
	fs.BoolVar(&o.noControlMaster, "no-control-master", false, "dial agent's own SSH connection even where ~/.ssh/config's ControlPath names a live ControlMaster (ssh's -o ControlPath=none); by default agent's sessions go through the operator's master, which verified the host key and logged in")
	o.become.addFlags(fs)
}

// overrides are the flags over ~/.ssh/config.
func (o *hostOptions) overrides() engine.SSHOverrides {
	return engine.SSHOverrides{ConfigFile: o.configFile, User: o.user, Port: o.port, Identities: o.identities, NoControlMaster: o.noControlMaster}
}

// target is the selected host: this machine without --ssh-host.
func (a *app) target() (engine.Target, error) {
	return engine.HostTarget(a.host.sshHost, a.host.overrides())
}

// dialOptions ask host-key and passphrase questions on the terminal and
// print connection warnings on stderr.
func (a *app) dialOptions() engine.DialOptions {
	return engine.DialOptions{SSH: sshtr.Options{
		Prompter: newTerminalPrompter(),
		Warn:     func(msg string) { fmt.Fprintln(a.stderr, "agent:", msg) },
	}}
}

// open connects to the selected host: local without --ssh-host.
func (a *app) open(ctx context.Context) (transport.Transport, error) {
	t, err := a.target()
	if err != nil {
		return nil, err
	}
	return engine.Dial(ctx, t, a.dialOptions())
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
