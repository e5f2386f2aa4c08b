package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/inventory"
	"github.com/autoshell/agent/inventory/vault"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// InventorySpec names an inventory: its sources (-i, given once or more:
// files, directories, scripts, host lists) and how to read them.
type InventorySpec struct {
	Sources []string
	// Vault holds the vault passwords (--vault-password-file, --vault-id,
	// --ask-vault-pass); nil: vaulted data is an error saying so.
	Vault *vault.Keyring
	// ScriptTimeout bounds each inventory script run (0: the default).
	ScriptTimeout time.Duration
}

// Name is how messages name the inventory.
func (s InventorySpec) Name() string { return strings.Join(s.Sources, ",") }

// SelectHosts loads the inventory, selects the hosts matching limit
// ("" for all) in the inventory's order, and resolves their SSH settings:
// the inventory's connection variables (ansible_host, ansible_port,
// ansible_user, ansible_ssh_private_key_file) over what ~/.ssh/config (or
// o's -F) says, like --ssh-host. A bad inventory or pattern is a
// ConfigError naming file:line; so is a limit (or an inventory) that
// selects no host, as in Ansible ("no hosts to target"), and a host whose
// ansible_connection agent cannot use.
func SelectHosts(spec InventorySpec, limit string, o SSHOverrides) ([]Target, error) {
	hosts, err := InventoryHosts(spec, limit, o)
	if err != nil {
		return nil, err
	}
	file := spec.Name()
	for _, h := range hosts {
		if _, ok := Connection(h.Connection); !ok {
			return nil, configf("inventory %s: host %s has ansible_connection=%s: agent reaches hosts over ssh or local only", file, h.Name, h.Connection)
		}
	}
	if len(hosts) == 0 {
		if strings.TrimSpace(limit) != "" {
			return nil, configf("inventory %s: no hosts match --limit %q", file, limit)
		}
		return nil, configf("inventory %s: no hosts", file)
	}
	return hosts, nil
}

// InventoryHosts is SelectHosts without the "no hosts" error and the
// check of ansible_connection.
func InventoryHosts(spec InventorySpec, limit string, o SSHOverrides) ([]Target, error) {
	if len(spec.Sources) == 0 {
		return nil, configf("no inventory: give -i FILE")
	}
	file := spec.Name()
	inv, err := inventory.LoadSources(spec.Sources, inventory.LoadOptions{Vault: spec.Vault, ScriptTimeout: spec.ScriptTimeout, DeferVault: true})
	if err != nil {
		return nil, ConfigError{err}
	}
	sel, err := inv.Limit(limit)
	if err != nil {
		return nil, configf("--limit %q: %w", limit, err)
	}
	// Only the selected hosts' vaulted vars files are decrypted, as
	// Ansible reads vars only for the hosts a run selects.
	if err := inv.Decrypt(sel); err != nil {
		return nil, ConfigError{err}
	}
	out := make([]Target, 0, len(sel))
	// The ssh_config files are read once for the whole selection.
	cache := sshtr.NewConfigCache()
	for _, h := range sel {
		vars, secrets := plainVars(inv, h)
		cv := &connVars{name: h.Name, groups: inv.GroupNames(h), vars: vars}
		cv.origin = func(key string) string {
			if o, ok := inv.VarOrigin(h, key); ok {
				return o.String()
			}
			return file
		}
		cfg, unused, err := resolveInventoryHost(cv, o, cache)
		if err != nil {
			return nil, err
		}
		conn, _, err := cv.get("ansible_connection")
		if err != nil {
			return nil, err
		}
		if err := refuseEscalation(cv); err != nil {
			return nil, err
		}
		bv, err := inventoryBecome(cv)
		if err != nil {
			return nil, err
		}
		t := Target{Name: h.Name, Groups: cv.groups, Vars: cv.vars, SSH: cfg, Connection: conn, Secrets: secrets,
			Unused: append(unused, unusedVars(vars)...), BecomeVars: bv}
		// A become setting agent cannot act on refuses the selection.
		if _, err := ResolveBecome(t, Become{}); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// plainVars are h's merged variables with the values decrypted from
// Ansible Vault as plain strings, and the names of the variables that
// hold such values or come from a vaulted file (sorted): secrets.
func plainVars(inv *inventory.Inventory, h *inventory.Host) (map[string]any, []string) {
	vars := inv.HostVars(h)
	var secrets []string
	for k, v := range vars {
		o, _ := inv.VarOrigin(h, k)
		if !o.Vault && !inventory.Vaulted(v) {
			continue
		}
		secrets = append(secrets, k)
		vars[k] = unvault(v)
	}
	sort.Strings(secrets)
	return vars, secrets
}

// unvault copies v with inventory.VaultString values as strings.
func unvault(v any) any {
	switch x := v.(type) {
	case inventory.VaultString:
		return string(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = unvault(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unvault(e)
		}
		return out
	}
	return v
}

// connVars are one inventory host's variables as its connection settings
// read them: templated values rendered.
type connVars struct {
	name   string
	groups []string
	vars   map[string]any
	// origin says where a variable was set (FILE:LINE), for errors.
	origin func(key string) string
	ctx    *execctx.Context // the host's variables for rendering, made when needed
}

// maxRenderDepth bounds how many times a value is rendered again when a
// variable it refers to holds a template itself.
const maxRenderDepth = 10

// get returns the value of the last of keys that is set (the spellings
// that win come last) as a string, and which key that was; "" when none
// is. A value holding {{ name }} references is rendered over the host's
// variables, inventory_hostname and group_names, as Ansible templates
// connection variables; anything beyond plain references (filters,
// expressions, {% %}) is an error naming the host and variable, so a
// literal "{{" never reaches a connection.
func (c *connVars) get(keys ...string) (string, string, error) {
	v, key := "", ""
	for _, k := range keys {
		if x, ok := c.vars[k]; ok && x != nil {
			v, key = fmt.Sprint(x), k
		}
	}
	if !strings.Contains(v, "{{") && !strings.Contains(v, "{%") && !strings.Contains(v, "{#") {
		return v, key, nil
	}
	fail := func(format string, a ...any) error {
		return configf("%s: inventory host %s: %s %q: %s", c.origin(key), c.name, key, v, fmt.Sprintf(format, a...))
	}
	if strings.Contains(v, "{%") || strings.Contains(v, "{#") {
		return "", "", fail("only {{ variable }} references can be used in connection variables")
	}
	if c.ctx == nil {
		c.ctx = execctx.New()
		for k, x := range c.vars {
			_ = c.ctx.Set(k, x) // names a template cannot refer to stay out
		}
		groups := make([]any, len(c.groups))
		for i, g := range c.groups {
			groups[i] = g
		}
		_ = c.ctx.Set("inventory_hostname", c.name)
		_ = c.ctx.Set("group_names", groups)
	}
	cur := v
	for range maxRenderDepth {
		r, err := c.ctx.Render(cur)
		if err != nil {
			return "", "", fail("%v", err)
		}
		if !strings.Contains(r, "{{") && !strings.Contains(r, "{%") {
			return r, key, nil
		}
		if r == cur {
			return "", "", fail("only plain {{ variable }} references can be used in connection variables (no filters or expressions), got %q", r)
		}
		cur = r
	}
	return "", "", fail("templates nested more than %d deep", maxRenderDepth)
}

// resolveInventoryHost gives an inventory host its SSH settings the way
// Ansible's ssh connection does it: ssh is run with the destination
// ansible_host (else the inventory name), so ~/.ssh/config's Host
// patterns match that; ansible_port, ansible_user and
// ansible_ssh_private_key_file are passed as -o options and beat the
// files. The older ansible_ssh_host/_port/_user spellings win over the
// new ones, as in Ansible. --user, --port and --identity apply where the
// inventory sets nothing (Ansible's -u and --private-key lose to
// inventory variables too). Templated values are rendered (connVars.get).
//
// ansible_ssh_timeout is ConnectTimeout; ansible_ssh_args, _common_args and
// _extra_args are read as ssh's command line (parseSSHArgs) and apply
// before the config files, as they do for ssh; what agent cannot act on
// in them is returned in unused, for a warning.
func resolveInventoryHost(c *connVars, o SSHOverrides, cache *sshtr.ConfigCache) (*sshtr.HostConfig, []UnusedVar, error) {
	var unused []UnusedVar
	name := c.name
	dest := name
	h, _, err := c.get("ansible_host", "ansible_ssh_host")
	if err != nil {
		return nil, nil, err
	}
	if h != "" {
		dest = h
	}
	opts := sshtr.ResolveOptions{
		ConfigFile: o.ConfigFile, User: o.User, Port: o.Port,
		IdentityFiles: o.Identities, Cache: cache, Options: o.options(),
	}
	u, _, err := c.get("ansible_user", "ansible_ssh_user")
	if err != nil {
		return nil, nil, err
	}
	if u != "" {
		opts.User = u
	}
	p, key, err := c.get("ansible_port", "ansible_ssh_port")
	if err != nil {
		return nil, nil, err
	}
	if p != "" {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 || n > 65535 {
			return nil, nil, configf("%s: inventory host %s: bad %s %q: want a port number from 1 to 65535", c.origin(key), name, key, p)
		}
		opts.Port = n
	}
	k, _, err := c.get("ansible_private_key_file", "ansible_ssh_private_key_file")
	if err != nil {
		return nil, nil, err
	}
	if k != "" {
		// Only the inventory's key, as Ansible's --private-key loses to
		// ansible_ssh_private_key_file.
		opts.IdentityFiles = []string{k}
	}
	t, key, err := c.get("ansible_ssh_timeout")
	if err != nil {
		return nil, nil, err
	}
	if t != "" {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 0 {
			return nil, nil, configf("%s: inventory host %s: bad %s %q: want whole seconds", c.origin(key), name, key, t)
		}
		opts.Options = append(opts.Options, fmt.Sprintf("ConnectTimeout %d", n))
	}
	for _, v := range sshArgVars {
		s, key, err := c.get(v)
		if err != nil {
			return nil, nil, err
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		lines, ignored, err := parseSSHArgs(s)
		if err != nil {
			return nil, nil, configf("%s: inventory host %s: %s %q: %v", c.origin(key), name, key, s, err)
		}
		opts.Options = append(opts.Options, lines...)
		if len(ignored) > 0 {
			unused = append(unused, UnusedVar{Var: v, Detail: "agent does not act on " + strings.Join(ignored, ", ")})
		}
	}
	cfg, err := sshtr.Resolve(dest, opts)
	if err != nil {
		return nil, nil, configf("inventory host %s: %w", name, err)
	}
	return cfg, unused, nil
}
