package engine

import (
	"fmt"
	"sort"
	"strings"
)

// UnusedVar is an inventory variable of Ansible's (ansible_*) that agent
// does not act on for a host, or the part of it agent cannot use.
type UnusedVar struct {
	Var    string
	Detail string // what is not acted on; "" for the whole variable
}

// actedOn are the ansible_* variables agent acts on (inventory.go, the
// dialers, the batch).
var actedOn = map[string]bool{
	"ansible_host": true, "ansible_ssh_host": true, "ansible_port": true, "ansible_ssh_port": true,
	"ansible_user": true, "ansible_ssh_user": true, "ansible_private_key_file": true,
	"ansible_ssh_private_key_file": true, "ansible_connection": true, "ansible_ssh_timeout": true,
	"ansible_ssh_args": true, "ansible_ssh_common_args": true, "ansible_ssh_extra_args": true,
	"ansible_group_priority": true,
}

// unusedVars are the ansible_* variables among vars agent does not act on.
func unusedVars(vars map[string]any) []UnusedVar {
	var out []UnusedVar
	for k := range vars {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "ansible_") || actedOn[lk] {
			continue
		}
		out = append(out, UnusedVar{Var: k})
	}
	return out
}

// maxWarnHosts is how many hosts a warning names before "and N more".
const maxWarnHosts = 5

// InventoryWarnings are the warnings a run over hosts owes the operator:
// one per ansible_* variable (and unusable part of one) agent does not
// act on, naming the hosts that set it — nothing an inventory says is
// ignored silently. Sorted by variable.
func InventoryWarnings(hosts []Target) []string {
	byVar := map[UnusedVar][]string{}
	var keys []UnusedVar
	for _, h := range hosts {
		for _, u := range h.Unused {
			if _, ok := byVar[u]; !ok {
				keys = append(keys, u)
			}
			byVar[u] = append(byVar[u], h.Name)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Var != keys[j].Var {
			return keys[i].Var < keys[j].Var
		}
		return keys[i].Detail < keys[j].Detail
	})
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		names := byVar[k]
		list := strings.Join(names[:min(len(names), maxWarnHosts)], ", ")
		if len(names) > maxWarnHosts {
			list += fmt.Sprintf(" and %d more", len(names)-maxWarnHosts)
		}
		what := "agent does not act on it"
		if k.Detail != "" {
			what = k.Detail
		}
		out = append(out, fmt.Sprintf("inventory variable %s: %s (%s %s)", k.Var, what, pluralHosts(len(names)), list))
	}
	return out
}

func pluralHosts(n int) string {
	if n == 1 {
		return "host"
	}
	return "hosts"
}

// becomeOn are the variables that turn privilege escalation on.
var becomeOn = []string{"ansible_become", "ansible_sudo", "ansible_su"}

// refuseBecome refuses a host whose inventory turns on privilege
// escalation: agent does not run steps through sudo yet, and running them
// as the login user while the inventory asked for another would be wrong
// in a way nothing shows. Other ansible_become_* settings alone are only
// warned about (unusedVars).
func refuseBecome(cv *connVars) error {
	for _, name := range becomeOn {
		v, key, err := cv.get(name)
		if err != nil {
			return err
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "", "no", "false", "0", "off", "n", "f":
			continue
		}
		if key != "" {
			return configf("inventory %s: host %s sets %s=%s: agent cannot run steps as another user yet (no become/sudo support); "+
				"remove it for this run or exclude the host with --limit", cv.origin(name), cv.name, name, v)
		}
	}
	return nil
}
