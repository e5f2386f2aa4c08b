package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/autoshell/agent/engine"
	"github.com/spf13/pflag"
)

// inventoryOptions are `agent inventory list`'s flags. -i, --limit and
// --json may also come before "inventory" (they are global flags too);
// the ones after it win.
type inventoryOptions struct {
	host  hostOptions
	inv   inventoryFlags
	limit string
	shard string
	json  bool
}

// runInventory is `agent inventory list -i FILE [--limit PAT] [--shard K/N] [--json]`.
func runInventory(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		args = []string{"list", "--help"} // its one sub-command's flags
	}
	if len(args) == 0 || args[0] != "list" {
		return usagef("inventory: want the sub-command list (agent inventory list -i FILE [--limit PATTERN] [--json])")
	}
	fs := pflag.NewFlagSet("inventory list", pflag.ContinueOnError)
	var o inventoryOptions
	o.host.addFlags(fs)
	_ = fs.MarkHidden("ssh-host") // the inventory names the hosts
	o.inv.addFlags(fs, "the Ansible inventory `SOURCE`")
	fs.StringVar(&o.limit, "limit", "", "list only the hosts matching `PATTERN` (Ansible's: web:&prod, web:!db, ~regex…)")
	fs.StringVar(&o.shard, "shard", "", "list only part `K/N` of the selected hosts: the hosts `--shard K/N` runs on")
	fs.BoolVar(&o.json, "json", false, "print a JSON array (sorted by name) instead of a table")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent inventory list -i FILE [--limit PATTERN] [--shard K/N] [--json]\n\n"+
			"Print the selected hosts with their groups and effective SSH settings\n"+
			"(inventory variables first, then ~/.ssh/config).\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args[1:], usage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("inventory list takes no arguments (got %q)", fs.Args())
	}
	mergeHost(&a.host, o.host, fs)
	if err := a.noBecome("inventory"); err != nil {
		return err
	}
	given := o.inv
	o.inv = a.task.batch.inv
	mergeInventory(&o.inv, given, fs)
	if !fs.Changed("limit") {
		o.limit = a.task.batch.limit
	}
	if !fs.Changed("shard") {
		o.shard = a.task.batch.shard
	}
	o.json = o.json || a.task.json
	if !o.inv.given() {
		return usagef("inventory list: give the inventory with -i FILE")
	}
	spec, err := o.inv.spec(ctx)
	if err != nil {
		return err
	}
	hosts, err := engine.InventoryHosts(spec, o.limit, a.host.overrides())
	if err != nil {
		return err
	}
	if o.shard != "" {
		sh, err := engine.ParseShard(o.shard)
		if err != nil {
			return err
		}
		hosts = sh.Select(hosts)
	}
	a.warnInventory(hosts)
	sort.SliceStable(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	if o.json {
		return writeInventoryJSON(a, hosts)
	}
	if len(hosts) == 0 {
		fmt.Fprintln(a.stderr, "agent: no hosts selected")
		return nil
	}
	// A CONNECTION column when some host is not reached over ssh.
	conns := false
	for _, h := range hosts {
		conns = conns || connectionName(h) != engine.ConnSSH
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	head := "NAME\tHOST\tPORT\tUSER\tGROUPS"
	if conns {
		head += "\tCONNECTION"
	}
	fmt.Fprintln(tw, head)
	for _, h := range hosts {
		groups := strings.Join(h.Groups, ",")
		if groups == "" {
			groups = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s", h.Name, h.SSH.HostName, h.SSH.Port, h.SSH.User, groups)
		if conns {
			fmt.Fprintf(tw, "\t%s", connectionName(h))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write listing: %w", err)
	}
	return nil
}

// inventoryEntry is one element of `agent inventory list --json`
// (DESIGN.md "Inventory listing").
type inventoryEntry struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
	Host   string   `json:"host"`
	Port   int      `json:"port"`
	User   string   `json:"user"`
	// Connection is set for a host not reached over ssh
	// (ansible_connection local, docker…).
	Connection string         `json:"connection,omitempty"`
	Vars       map[string]any `json:"vars"`
}

// connectionName is how the listing names h's connection.
func connectionName(h engine.Target) string {
	if k, _ := engine.Connection(h.Connection); k == engine.ConnSSH {
		return engine.ConnSSH
	}
	return h.Connection
}

func writeInventoryJSON(a *app, hosts []engine.Target) error {
	out := make([]inventoryEntry, 0, len(hosts))
	for _, h := range hosts {
		e := inventoryEntry{Name: h.Name, Groups: h.Groups, Host: h.SSH.HostName, Port: h.SSH.Port, User: h.SSH.User, Vars: h.Vars}
		if connectionName(h) != engine.ConnSSH {
			e.Connection = h.Connection
		}
		if e.Groups == nil {
			e.Groups = []string{}
		}
		if e.Vars == nil {
			e.Vars = map[string]any{}
		}
		e.Vars = jsonSafe(maps.Clone(e.Vars)).(map[string]any)
		for _, k := range h.Secrets { // decrypted from Ansible Vault: never printed
			e.Vars[k] = "[vaulted]"
		}
		out = append(out, e)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("inventory list: %w", err)
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n", b)
	return err
}

// jsonSafe replaces the floats JSON cannot hold (YAML's .inf and .nan) by
// the strings Python would print for them.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonSafe(e)
		}
		return out
	}
	return v
}
