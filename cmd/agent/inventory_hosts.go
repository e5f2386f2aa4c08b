package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/autoshell/agent/inventory"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// inventoryHost is one host selected from an inventory with its effective
// SSH settings: the inventory's connection variables (ansible_host,
// ansible_port, ansible_user, ansible_ssh_private_key_file) over what
// ~/.ssh/config (or -F) says for it, like --ssh-host.
type inventoryHost struct {
	Name   string         // the inventory name (inventory_hostname)
	Groups []string       // every group, directly or through children, sorted, without all
	Vars   map[string]any // the host's merged inventory variables
	SSH    *sshtr.HostConfig
	// Connection is ansible_connection ("" when unset, else e.g. "ssh" or
	// "local"): what Ansible would use to reach the host. SSH is resolved
	// whatever it says.
	Connection string
}

// selectHosts loads the inventory file, selects the hosts matching limit
// ("" for all) in the inventory's order, and resolves their SSH settings.
// A bad inventory or pattern is a usageError naming file:line; so is a
// limit (or an inventory) that selects no host, as in Ansible ("no hosts
// to target").
func (a *app) selectHosts(file, limit string) ([]inventoryHost, error) {
	hosts, err := a.inventoryHosts(file, limit)
	if err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		if strings.TrimSpace(limit) != "" {
			return nil, usagef("inventory %s: no hosts match --limit %q", file, limit)
		}
		return nil, usagef("inventory %s: no hosts", file)
	}
	return hosts, nil
}

// inventoryHosts is selectHosts without the "no hosts" error.
func (a *app) inventoryHosts(file, limit string) ([]inventoryHost, error) {
	if file == "" {
		return nil, usagef("no inventory: give -i FILE")
	}
	inv, err := inventory.Load(file)
	if err != nil {
		return nil, usageError{err}
	}
	sel, err := inv.Limit(limit)
	if err != nil {
		return nil, usagef("--limit %q: %w", limit, err)
	}
	out := make([]inventoryHost, 0, len(sel))
	for _, h := range sel {
		vars := inv.HostVars(h)
		origin := func(key string) string {
			if o, ok := inv.VarOrigin(h, key); ok {
				return o.String()
			}
			return file
		}
		cfg, err := a.resolveInventoryHost(h.Name, vars, origin)
		if err != nil {
			return nil, err
		}
		conn := ""
		if c, ok := vars["ansible_connection"]; ok && c != nil {
			conn = fmt.Sprint(c)
		}
		out = append(out, inventoryHost{Name: h.Name, Groups: inv.GroupNames(h), Vars: vars, SSH: cfg, Connection: conn})
	}
	return out, nil
}

// resolveInventoryHost gives an inventory host its SSH settings the way
// Ansible's ssh connection does it: ssh is run with the destination
// ansible_host (else the inventory name), so ~/.ssh/config's Host
// patterns match that; ansible_port, ansible_user and
// ansible_ssh_private_key_file are passed as -o options and beat the
// files. The older ansible_ssh_host/_port/_user spellings win over the
// new ones, as in Ansible. --user, --port and --identity apply where the
// inventory sets nothing (Ansible's -u and --private-key lose to
// inventory variables too). origin says where a variable was set
// (FILE:LINE), for errors.
func (a *app) resolveInventoryHost(name string, vars map[string]any, origin func(key string) string) (*sshtr.HostConfig, error) {
	str := func(keys ...string) (v, key string) {
		for _, k := range keys { // later keys win
			if x, ok := vars[k]; ok && x != nil {
				v, key = fmt.Sprint(x), k
			}
		}
		return v, key
	}
	dest := name
	if h, _ := str("ansible_host", "ansible_ssh_host"); h != "" {
		dest = h
	}
	opts := sshtr.ResolveOptions{
		ConfigFile: a.host.configFile, User: a.host.user, Port: a.host.port,
		IdentityFiles: a.host.identities,
	}
	if u, _ := str("ansible_user", "ansible_ssh_user"); u != "" {
		opts.User = u
	}
	if p, key := str("ansible_port", "ansible_ssh_port"); p != "" {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 || n > 65535 {
			return nil, usagef("%s: inventory host %s: bad %s %q: want a port number from 1 to 65535", origin(key), name, key, p)
		}
		opts.Port = n
	}
	if k, _ := str("ansible_private_key_file", "ansible_ssh_private_key_file"); k != "" {
		// Only the inventory's key, as Ansible's --private-key loses to
		// ansible_ssh_private_key_file.
		opts.IdentityFiles = []string{k}
	}
	cfg, err := sshtr.Resolve(dest, opts)
	if err != nil {
		return nil, usagef("inventory host %s: %w", name, err)
	}
	return cfg, nil
}
