package engine

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// Target is a host to open: this machine, an SSH destination, an
// inventory host.
type Target struct {
	// Name names the host in events, the audit log and the undo journal:
	// the inventory name; "" for the transport's own name ("local", the
	// destination as given).
	Name string
	// Connection is how to reach it, as Ansible's ansible_connection says
	// ("" is ssh): a key of the dialer registry (Connections).
	Connection string
	// SSH is the host's effective SSH settings, for connection ssh.
	SSH *sshtr.HostConfig
	// Groups and Vars are an inventory host's groups (every group,
	// directly or through children, sorted, without all) and merged
	// variables; nil otherwise.
	Groups []string
	Vars   map[string]any
	// Secrets are the names of Vars decrypted from Ansible Vault: never
	// shown to the model, their values redacted everywhere.
	Secrets []string
	// Unused are the host's ansible_* variables (or parts of them) agent
	// does not act on, for InventoryWarnings.
	Unused []UnusedVar
	// BecomeVars are an inventory host's become settings (ansible_become,
	// ansible_become_user…, rendered), by key: enabled, user, method,
	// password, exe, flags (see ResolveBecome).
	BecomeVars map[string]BecomeVar
}

// DialOptions are what a dialer may need besides the target.
type DialOptions struct {
	// SSH are the options of an SSH connection: the prompter for host keys
	// and passphrases, the warning sink.
	SSH sshtr.Options
}

// Dialer opens a connection to t.
type Dialer func(ctx context.Context, t Target, o DialOptions) (transport.Transport, error)

// dialers is the registry: the one place that knows which transport
// reaches a host.
var dialers = map[string]Dialer{
	ConnLocal: func(context.Context, Target, DialOptions) (transport.Transport, error) { return local.New() },
	ConnSSH: func(ctx context.Context, t Target, o DialOptions) (transport.Transport, error) {
		if t.SSH == nil {
			return nil, fmt.Errorf("%s: no SSH settings", cmp.Or(t.Name, "ssh target"))
		}
		tr, err := sshtr.Dial(ctx, t.SSH, o.SSH)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		return tr, nil
	},
}

// Connection kinds of the registry.
const (
	ConnLocal = "local"
	ConnSSH   = "ssh"
)

// connAliases are the ansible_connection values agent reaches with a
// registry entry.
var connAliases = map[string]string{
	"": ConnSSH, "ssh": ConnSSH, "paramiko": ConnSSH, "smart": ConnSSH, "ansible.builtin.ssh": ConnSSH,
	"ansible.builtin.paramiko_ssh": ConnSSH, "paramiko_ssh": ConnSSH,
	"local": ConnLocal, "ansible.builtin.local": ConnLocal,
}

// Connection returns the registry key that reaches a host whose
// ansible_connection is conn; ok is false for a connection agent has no
// transport for (docker, winrm, …).
func Connection(conn string) (string, bool) {
	k, ok := connAliases[strings.ToLower(strings.TrimSpace(conn))]
	return k, ok
}

// Dial opens t through the dialer its connection names.
func Dial(ctx context.Context, t Target, o DialOptions) (transport.Transport, error) {
	k, ok := Connection(t.Connection)
	if !ok {
		return nil, fmt.Errorf("%s: ansible_connection %s is not supported", t.Name, t.Connection)
	}
	return dialers[k](ctx, t, o)
}

// SSHOverrides are the operator's settings over ~/.ssh/config, like ssh's
// own flags: -F, -l, -p, -i (agent's --identity).
type SSHOverrides struct {
	ConfigFile string
	User       string
	Port       int
	Identities []string
	// NoControlMaster (--no-control-master) is ssh's -o ControlPath=none:
	// agent dials its own connection even where the operator's
	// ControlMaster is live. It beats the config files and the
	// inventory's ssh arguments.
	NoControlMaster bool
}

// options are the -o options the overrides imply, ahead of any other.
func (o SSHOverrides) options() []string {
	if o.NoControlMaster {
		return []string{"ControlPath none"}
	}
	return nil
}

// HostTarget is the target of one host given on the command line: this
// machine when dest is "", else an ssh_config alias, [user@]host[:port]
// or ssh://user@host:port resolved as `ssh -G` does with the overrides.
// A destination that does not resolve is a ConfigError.
func HostTarget(dest string, o SSHOverrides) (Target, error) {
	if dest == "" {
		return Target{Connection: ConnLocal}, nil
	}
	dest = hostPortURI(dest)
	cfg, err := sshtr.Resolve(dest, sshtr.ResolveOptions{
		ConfigFile: o.ConfigFile, User: o.User, Port: o.Port, IdentityFiles: o.Identities,
		Options: o.options(),
	})
	if err != nil {
		return Target{}, ConfigError{err}
	}
	return Target{Connection: ConnSSH, SSH: cfg}, nil
}

// hostPortURI is dest as ssh://… when it is [user@]host:port (not an
// IPv6 address), which ssh itself would take as a host named
// "host:port" (issue 29: "no such host"); any other dest is returned as
// it is (an alias, user@host, a bare IPv6 address, a URI).
func hostPortURI(dest string) string {
	if strings.HasPrefix(dest, "ssh://") {
		return dest
	}
	at := strings.LastIndex(dest, "@")
	hostPort := dest[at+1:]
	i := strings.LastIndex(hostPort, ":")
	if i <= 0 {
		return dest
	}
	host, port := hostPort[:i], hostPort[i+1:]
	if host == "" || strings.ContainsAny(host, ":[]") {
		return dest // an IPv6 address
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
		return dest
	}
	return "ssh://" + dest
}

// Name of the local target when Target.Name is empty: the transport's.
func (t Target) name(tr transport.Transport) string {
	if t.Name != "" {
		return t.Name
	}
	return tr.Host().Name
}
