package main

import (
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
}

// selectHosts loads the inventory file, selects the hosts matching limit
// ("" for all) in the inventory's order, and resolves their SSH settings.
// A bad inventory or pattern is a usageError naming file:line.
func (a *app) selectHosts(file, limit string) ([]inventoryHost, error) {
	return nil, usagef("inventory: not built yet")
}
