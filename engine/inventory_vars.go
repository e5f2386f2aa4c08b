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
	// become.go: ResolveBecome acts on each or refuses the selection.
	"ansible_become": true, "ansible_become_user": true, "ansible_become_method": true,
	"ansible_become_pass": true, "ansible_become_password": true, "ansible_become_exe": true,
	"ansible_become_flags": true, "ansible_sudo_user": true, "ansible_sudo_pass": true,
	"ansible_sudo_exe": true, "ansible_sudo_flags": true,
	"ansible_sudo": true, "ansible_su": true, // refuseEscalation
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

// oldEscalation are the variables of Ansible 1.x that turned privilege
// escalation on; current Ansible reads ansible_become alone.
var oldEscalation = []string{"ansible_sudo", "ansible_su"}

// refuseEscalation refuses a host whose inventory turns privilege
// escalation on with ansible_sudo or ansible_su: running its steps as the
// login user while the inventory asked for another would be wrong in a
// way nothing shows. ansible_become (engine/become.go) is how to say it.
func refuseEscalation(cv *connVars) error {
	for _, name := range oldEscalation {
		v, key, err := cv.get(name)
		if err != nil {
			return err
		}
		if b, ok := ansibleBool(v); ok && !b {
			continue
		}
		if key != "" {
			return configf("inventory %s: host %s sets %s=%s: agent escalates with ansible_become (method sudo) only; "+
				"say ansible_become=yes (with ansible_become_method=sudo), or exclude the host with --limit", cv.origin(name), cv.name, name, v)
		}
	}
	return nil
}
