package inventory

import (
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/autoshell/agent/inventory/vault"
)

// Inventory is a parsed inventory: hosts and groups in the order Ansible
// records them. Build one with Load, Parse, ParseINI or ParseYAML.
type Inventory struct {
	// File is the name errors and listings use for the source: the
	// sources given to LoadSources joined by commas.
	File string

	// sources are the files (or host lists) parsed into the inventory,
	// in order; src is the one being parsed. A pos names one of them.
	sources []string
	src     int
	// dirs are the inventory sources' directories whose group_vars/ and
	// host_vars/ apply, in the order of the sources (LoadSources).
	dirs []varsDir
	// vaultedSrc are the sources that were whole vaulted files: every
	// variable they set is a secret.
	vaultedSrc map[int]bool
	// vault decrypts vaulted data (nil: none can be); scriptTimeout
	// bounds an inventory script run; deferVault defers vaulted vars
	// files to Decrypt (LoadOptions).
	vault         *vault.Keyring
	scriptTimeout time.Duration
	deferVault    bool

	hosts    []*Host // in the order first seen (Ansible's inventory.hosts)
	hostIdx  map[string]*Host
	groups   []*Group // in the order created (Ansible's inventory.groups)
	groupIdx map[string]*Group
	expanded int // host names produced by ranges so far (bounded)
	varSets  int // host variables set on host lines or entries so far (bounded)
	// links records each parent→child link's order and line, for
	// dedupe and for naming the link that closes a loop (checkLoops).
	links map[link]linkInfo
}

// varsDir is what one inventory directory's group_vars/ and host_vars/
// say, with where each variable was set.
type varsDir struct {
	groups map[*Group]varsFile
	hosts  map[*Host]varsFile
}

// pos is where a variable or link was set: a source of the inventory
// and a line in it (0 when on none).
type pos struct {
	src  int32
	line int32
}

// at is the position of line in the source being parsed.
func (inv *Inventory) at(line int) pos { return pos{src: int32(inv.src), line: int32(line)} }

// origin turns a pos into file and line.
func (inv *Inventory) origin(p pos) Origin {
	f := inv.File
	if int(p.src) < len(inv.sources) {
		f = inv.sources[p.src]
	}
	return Origin{File: f, Line: int(p.line), Vault: inv.vaultedSrc[int(p.src)]}
}

// addSource makes name the source being parsed.
func (inv *Inventory) addSource(name string) {
	inv.sources = append(inv.sources, name)
	inv.src = len(inv.sources) - 1
}

// file is the name of the source being parsed.
func (inv *Inventory) file() string {
	if inv.src < len(inv.sources) {
		return inv.sources[inv.src]
	}
	return inv.File
}

// varsFile is the merged variables of one host's or group's vars files.
// With LoadOptions.DeferVault, the files of an entity that holds vaulted
// data are read only when Decrypt is given a host that needs them:
// deferred names them until then.
type varsFile struct {
	vars     map[string]any
	origin   map[string]Origin
	deferred *deferredVars
}

// deferredVars are an entity's vars files not read yet: base/name as
// readVarsFiles takes them.
type deferredVars struct{ base, name string }

// Bounds, so that a few short lines cannot exhaust the machine: the host
// entries (after range expansion) one inventory may hold, and the
// variables its host lines or entries may set, counted once per host
// (web[1:100000] a=1 b=2 sets 200,000).
const (
	maxExpanded = 100_000
	maxVarSets  = 1_000_000
)

// Origin is where a variable was set: a file, and a line when known.
type Origin struct {
	File string
	Line int
	// Vault is set when the value was decrypted with Ansible Vault (a
	// !vault value or an encrypted file): a secret.
	Vault bool
}

func (o Origin) String() string {
	if o.Line > 0 {
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	return o.File
}

// expand is expandHostPattern within the inventory's budget.
func (inv *Inventory) expand(pattern string) ([]string, int, error) {
	names, port, err := expandHostPattern(pattern)
	if err != nil {
		return nil, 0, err
	}
	inv.expanded += len(names)
	if inv.expanded > maxExpanded {
		return nil, 0, fmt.Errorf("the inventory lists more than %d hosts", maxExpanded)
	}
	return names, port, nil
}

// Host is one inventory host.
type Host struct {
	// Name is the inventory name (inventory_hostname).
	Name string
	// Vars are the variables set on the host itself (host line or hosts:
	// mapping), not its groups'; see Inventory.HostVars for the merged set.
	// The hosts of one range share one map until one of them gets a value
	// of its own: read it, never write to it.
	Vars map[string]any

	lines  map[string]pos // where each of Vars was set
	shared bool           // Vars and lines are shared with other hosts
	direct []*Group       // groups the host was put in directly
}

// setVar sets one of h's own variables, copying a shared map first.
func (h *Host) setVar(k string, v any, at pos) {
	if h.shared {
		h.Vars = maps.Clone(h.Vars)
		h.lines = maps.Clone(h.lines)
		h.shared = false
	}
	h.Vars[k] = v
	h.lines[k] = at
}

// Group is one inventory group. all and ungrouped always exist.
type Group struct {
	Name string
	// Vars are the group's own variables ([g:vars] or vars:).
	Vars map[string]any
	// lines are where each of Vars was set.
	lines map[string]pos
	// Children and Hosts are the direct members in the order added.
	Children []*Group
	Hosts    []*Host
	Parents  []*Group

	// Priority is ansible_group_priority (default 1): among groups of the
	// same depth, a higher priority is merged later and wins.
	Priority int
	depth    int            // longest path from all; set by finish
	members  map[*Host]bool // Hosts as a set
}

// Error is a problem in an inventory file. Line is 0 when the problem is
// not on one line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	default:
		return e.Msg
	}
}

func newInventory(file string) *Inventory {
	inv := &Inventory{File: file, hostIdx: map[string]*Host{}, groupIdx: map[string]*Group{}, links: map[link]linkInfo{}}
	inv.addGroup("all")
	inv.addGroup("ungrouped")
	// Ansible's InventoryData starts with ungrouped as all's first child.
	_ = inv.addChild(inv.groupIdx["all"], inv.groupIdx["ungrouped"], 0)
	return inv
}

// Load reads an inventory file (or directory, or script) as LoadSources
// does, with its default options.
func Load(file string) (*Inventory, error) {
	return LoadSources([]string{file}, LoadOptions{})
}

// Parse parses data named file, choosing the format as Load does.
func Parse(file string, data []byte) (*Inventory, error) {
	inv := newInventory(file)
	inv.addSource(file)
	if err := inv.parseData(file, data); err != nil {
		return nil, err
	}
	if err := inv.finish(); err != nil {
		return nil, err
	}
	return inv, nil
}

// parseData parses one file's data into inv. Files named *.yaml, *.yml or
// *.json are YAML, *.ini INI; a file with another name is YAML if it is a
// YAML mapping and INI otherwise (Ansible too tries its yaml plugin
// first).
func (inv *Inventory) parseData(file string, data []byte) error {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml", ".json":
		mapping, err := inv.parseYAML(file, data)
		if err != nil && !mapping {
			// Not YAML at all: Ansible's ini plugin gets its turn.
			if ierr := inv.parseINI(file, data); ierr == nil {
				return nil
			}
		}
		return err
	case ".ini":
		return inv.parseINI(file, data)
	}
	mapping, err := inv.parseYAML(file, data)
	if mapping {
		return err
	}
	return inv.parseINI(file, data)
}

func (inv *Inventory) addGroup(name string) *Group {
	if g, ok := inv.groupIdx[name]; ok {
		return g
	}
	g := &Group{Name: name, Vars: map[string]any{}, lines: map[string]pos{}, Priority: 1, members: map[*Host]bool{}}
	inv.groups = append(inv.groups, g)
	inv.groupIdx[name] = g
	return g
}

// addHost adds name to the inventory (if new, with no variables) and to
// g (if not nil), and reports whether it was new.
func (inv *Inventory) addHost(name string, g *Group) (*Host, bool) {
	h, ok := inv.hostIdx[name]
	if !ok {
		h = &Host{Name: name, Vars: map[string]any{}, lines: map[string]pos{}}
		inv.hosts = append(inv.hosts, h)
		inv.hostIdx[name] = h
	}
	if g != nil && !g.members[h] {
		g.Hosts = append(g.Hosts, h)
		g.members[h] = true
		h.direct = append(h.direct, g)
	}
	return h, !ok
}

// addHosts adds the hosts of one host line or entry (names, the port it
// gave or 0) to g with the variables it set (keys, distinct, their values
// and the lines they were set on; line is the entry's). A port becomes a
// new host's ansible_port, as in Ansible. The new hosts share one
// variables map.
func (inv *Inventory) addHosts(names []string, g *Group, port int, keys []string, vals []any, keyLines []int, line int) error {
	n := len(keys)
	if port > 0 {
		n++
	}
	inv.varSets += len(names) * n
	if inv.varSets > maxVarSets {
		return fmt.Errorf("the inventory sets more than %d host variables (hosts times the variables on their lines)", maxVarSets)
	}
	var shared map[string]any
	var lines map[string]pos
	for _, name := range names {
		if name == "" {
			return fmt.Errorf("empty host name")
		}
		h, isNew := inv.addHost(name, g)
		if !isNew {
			for i, k := range keys {
				h.setVar(k, vals[i], inv.at(keyLines[i]))
			}
			continue
		}
		if shared == nil {
			shared, lines = make(map[string]any, n), make(map[string]pos, n)
			if port > 0 {
				shared["ansible_port"], lines["ansible_port"] = port, inv.at(line)
			}
			for i, k := range keys {
				shared[k], lines[k] = vals[i], inv.at(keyLines[i])
			}
		}
		h.Vars, h.lines, h.shared = shared, lines, true
	}
	return nil
}

type link struct{ parent, child *Group }

type linkInfo struct {
	seq int
	at  pos
}

// addChild makes child a child group of parent (line is where the file
// says so, 0 if nowhere). A group cannot be its own child; longer loops
// are found once all links are in (checkLoops), since looking for one on
// every link made long chains of groups quadratic.
func (inv *Inventory) addChild(parent, child *Group, line int) error {
	if parent == child {
		return fmt.Errorf("group %q cannot be a child of itself", child.Name)
	}
	l := link{parent, child}
	if _, ok := inv.links[l]; ok {
		return nil
	}
	inv.links[l] = linkInfo{seq: len(inv.links), at: inv.at(line)}
	parent.Children = append(parent.Children, child)
	child.Parents = append(child.Parents, parent)
	return nil
}

// later reports whether a was added after b, preferring links a file
// states (line > 0) to the ones finish adds under all.
func later(a, b linkInfo) bool {
	if (a.at.line > 0) != (b.at.line > 0) {
		return a.at.line > 0
	}
	return a.seq > b.seq
}

// checkLoops looks for a loop of children in one depth-first walk. For a
// loop it names the link added last, the one Ansible, which checks every
// link as it is added, would refuse.
func (inv *Inventory) checkLoops() error {
	const (
		white = iota
		grey
		black
	)
	colour := make(map[*Group]int, len(inv.groups))
	type frame struct {
		g    *Group
		next int // index of the next child to visit
	}
	for _, root := range inv.groups {
		if colour[root] != white {
			continue
		}
		stack := []frame{{g: root}}
		colour[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.g.Children) {
				colour[top.g] = black
				stack = stack[:len(stack)-1]
				continue
			}
			c := top.g.Children[top.next]
			top.next++
			switch colour[c] {
			case white:
				colour[c] = grey
				stack = append(stack, frame{g: c})
			case grey: // c is on the stack: c → … → top.g → c
				last := link{top.g, c}
				for i := len(stack) - 1; i > 0 && stack[i].g != c; i-- {
					l := link{stack[i-1].g, stack[i].g}
					if later(inv.links[l], inv.links[last]) {
						last = l
					}
				}
				o := inv.origin(inv.links[last].at)
				return &Error{File: o.File, Line: o.Line, Msg: fmt.Sprintf(
					"adding group %q as child to %q creates a recursive dependency loop", last.child.Name, last.parent.Name)}
			}
		}
	}
	return nil
}

// finish does what Ansible's reconcile_inventory does: groups without a
// parent become children of all, hosts in no group go to ungrouped, hosts
// in another group leave ungrouped; then it refuses loops of children and
// computes group depths.
func (inv *Inventory) finish() error {
	all, ungrouped := inv.groupIdx["all"], inv.groupIdx["ungrouped"]
	for _, g := range inv.groups {
		if g != all && len(g.Parents) == 0 {
			_ = inv.addChild(all, g, 0)
		}
	}
	if err := inv.checkLoops(); err != nil {
		return err
	}
	leave := map[*Host]bool{}
	for _, h := range inv.hosts {
		others := 0
		for _, g := range inv.hostGroups(h) {
			if g != all && g != ungrouped {
				others++
			}
		}
		switch {
		case others > 0 && ungrouped.members[h]:
			leave[h] = true
			h.direct = removeGroup(h.direct, ungrouped)
		case others == 0 && !ungrouped.members[h]:
			inv.addHost(h.Name, ungrouped)
		}
	}
	if len(leave) > 0 {
		kept := ungrouped.Hosts[:0]
		for _, h := range ungrouped.Hosts {
			if leave[h] {
				delete(ungrouped.members, h)
			} else {
				kept = append(kept, h)
			}
		}
		ungrouped.Hosts = kept
	}
	depth := map[*Group]int{}
	var d func(g *Group) int
	d = func(g *Group) int {
		if v, ok := depth[g]; ok {
			return v
		}
		n := 0
		for _, p := range g.Parents {
			if v := d(p) + 1; v > n {
				n = v
			}
		}
		depth[g] = n
		return n
	}
	for _, g := range inv.groups {
		g.depth = d(g)
	}
	return nil
}

func removeGroup(gs []*Group, g *Group) []*Group {
	out := gs[:0]
	for _, x := range gs {
		if x != g {
			out = append(out, x)
		}
	}
	return out
}

// Hosts returns every host in the order Ansible's pattern "all" gives.
func (inv *Inventory) Hosts() []*Host {
	return dedupe(inv.groupHosts(inv.groupIdx["all"]))
}

// Host returns the host named name, or nil.
func (inv *Inventory) Host(name string) *Host { return inv.hostIdx[name] }

// Group returns the group named name, or nil.
func (inv *Inventory) Group(name string) *Group { return inv.groupIdx[name] }

// Groups returns every group, all and ungrouped included, in creation order.
func (inv *Inventory) Groups() []*Group { return append([]*Group(nil), inv.groups...) }

// hostGroups returns every group h is in, directly or through children,
// all included.
func (inv *Inventory) hostGroups(h *Host) []*Group {
	var out []*Group
	seen := map[*Group]bool{}
	var walk func(g *Group)
	walk = func(g *Group) {
		if seen[g] {
			return
		}
		seen[g] = true
		out = append(out, g)
		for _, p := range g.Parents {
			walk(p)
		}
	}
	for _, g := range h.direct {
		walk(g)
	}
	return out
}

// GroupNames returns the names of every group h is in, directly or
// through children, sorted, without all (Ansible's group_names).
func (inv *Inventory) GroupNames(h *Host) []string {
	var names []string
	for _, g := range inv.hostGroups(h) {
		if g.Name != "all" {
			names = append(names, g.Name)
		}
	}
	sort.Strings(names)
	return names
}

// HostVars returns h's merged inventory variables: the vars of all its
// groups ordered by depth (all first, then parents before children), then
// ansible_group_priority, then name, each overriding the previous one
// key by key; then, source by source, the same groups' group_vars/ files
// in the same order; then the host's own vars; then, source by source, its
// host_vars/ files. This is Ansible's order (VARIABLE_PRECEDENCE's
// default, vars plugins run per inventory source).
func (inv *Inventory) HostVars(h *Host) map[string]any {
	gs := inv.sortedGroups(h)
	out := map[string]any{}
	for _, g := range gs {
		for k, v := range g.Vars {
			out[k] = v
		}
	}
	for _, d := range inv.dirs {
		for _, g := range gs {
			for k, v := range d.groups[g].vars {
				out[k] = v
			}
		}
	}
	for k, v := range h.Vars {
		out[k] = v
	}
	for _, d := range inv.dirs {
		for k, v := range d.hosts[h].vars {
			out[k] = v
		}
	}
	return out
}

// VarOrigin returns where the value HostVars gives h for name was set,
// and false when HostVars has no such variable.
func (inv *Inventory) VarOrigin(h *Host, name string) (Origin, bool) {
	for i := len(inv.dirs) - 1; i >= 0; i-- {
		if o, ok := inv.dirs[i].hosts[h].origin[name]; ok {
			return o, true
		}
	}
	if _, ok := h.Vars[name]; ok {
		return inv.origin(h.lines[name]), true
	}
	gs := inv.sortedGroups(h)
	for i := len(inv.dirs) - 1; i >= 0; i-- {
		for j := len(gs) - 1; j >= 0; j-- {
			if o, ok := inv.dirs[i].groups[gs[j]].origin[name]; ok {
				return o, true
			}
		}
	}
	for i := len(gs) - 1; i >= 0; i-- {
		if _, ok := gs[i].Vars[name]; ok {
			return inv.origin(gs[i].lines[name]), true
		}
	}
	return Origin{}, false
}

// sortedGroups returns h's groups in the order their variables merge.
func (inv *Inventory) sortedGroups(h *Host) []*Group {
	gs := inv.hostGroups(h)
	sort.SliceStable(gs, func(i, j int) bool {
		a, b := gs[i], gs[j]
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Name < b.Name
	})
	return gs
}

// groupHosts returns the hosts of g and its descendants, walking the
// groups breadth first (g, its children, their children…) like Ansible's
// Group.get_hosts. Duplicates are kept; callers dedupe.
func (inv *Inventory) groupHosts(g *Group) []*Host {
	order := []*Group{g}
	seen := map[*Group]bool{g: true}
	level := []*Group{g}
	for len(level) > 0 {
		var next []*Group
		for _, x := range level {
			for _, c := range x.Children {
				if !seen[c] {
					seen[c] = true
					order = append(order, c)
					next = append(next, c)
				}
			}
		}
		level = next
	}
	var out []*Host
	hseen := map[*Host]bool{}
	for _, x := range order {
		for _, h := range x.Hosts {
			if !hseen[h] {
				hseen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

func dedupe(hs []*Host) []*Host {
	seen := make(map[*Host]bool, len(hs))
	out := make([]*Host, 0, len(hs))
	for _, h := range hs {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}
