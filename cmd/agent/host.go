package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
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
}

func (o *hostOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.sshHost, "ssh-host", "", "run on `HOST` over SSH (a Host from ~/.ssh/config, [user@]host or ssh://user@host:port); default: this machine")
	fs.StringVarP(&o.configFile, "ssh-config", "F", "", "read SSH settings from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config")
	fs.StringVarP(&o.user, "user", "l", "", "remote `USER` (overrides the config file)")
	fs.IntVarP(&o.port, "port", "p", 0, "remote `PORT` (overrides the config file)")
	// -i is the inventory (as in Ansible); the key file is --identity only.
	fs.StringArrayVar(&o.identities, "identity", nil, "private key `FILE` to try first (repeatable; ssh's -i)")
}

func (o *hostOptions) resolve(alias string) (*sshtr.HostConfig, error) {
	cfg, err := sshtr.Resolve(alias, sshtr.ResolveOptions{
		ConfigFile: o.configFile, User: o.user, Port: o.port, IdentityFiles: o.identities,
	})
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// open connects to the selected host: local without --ssh-host.
func (a *app) open(ctx context.Context) (transport.Transport, error) {
	if a.host.sshHost == "" {
		return local.New()
	}
	cfg, err := a.host.resolve(a.host.sshHost)
	if err != nil {
		return nil, err
	}
	t, err := sshtr.Dial(ctx, cfg, sshtr.Options{
		Prompter: newTerminalPrompter(),
		Warn:     func(msg string) { fmt.Fprintln(a.stderr, "agent:", msg) },
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
