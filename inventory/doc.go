// Package inventory reads Ansible inventories (INI and YAML) and selects
// hosts with Ansible's host patterns. It does no network I/O.
//
// The aim is to agree with Ansible (ansible-core 2.14, Debian's ansible
// package) on every host, group and variable: the tests compare this
// package with ansible-inventory --list and with Ansible's
// InventoryManager on fixture and generated inventories.
//
// What follows Ansible:
//   - INI (plugins/inventory/ini.py): lines before any section are hosts
//     of ungrouped; [g] host lines ("name[:port] k=v…", split like
//     Python's shlex with # comments), [g:vars] "k = v" lines,
//     [g:children] group names, which may be declared later. Values are
//     typed like Python literals (ast.literal_eval): 8080 and 0x1F are
//     ints, 1.5 a float, True/False/None, [..] (..) {..} containers, 'x'
//     a string; anything else (yes, 010, hello) stays a string.
//   - YAML (plugins/inventory/yaml.py): top-level keys are groups, each
//     with hosts:, vars: and children: (recursively); a null host or
//     group is fine; "hosts: web1" means {web1: null}. Scalars are typed
//     as YAML 1.1 (PyYAML) types them: yes/no/on/off are booleans, 010 is
//     octal, 1:30 is 90, 1e3 is a string. Anchors and merge keys work.
//   - Ranges: web[01:20] (zero padding kept), db-[a:c], n[1:10:2], several
//     per name; host:port and [v6addr]:port.
//   - all and ungrouped: every group without a parent is a child of all;
//     a host in no other group is in ungrouped.
//   - Variables: groups by depth (all, then parents, then children), then
//     ansible_group_priority, then name; then group_vars/ files for the
//     same groups; then the host's own; then host_vars/ files. Merging is
//     key by key (hash_behaviour=replace). Load reads group_vars/ and
//     host_vars/ beside the file as Ansible's host_group_vars plugin does.
//   - Patterns: a:b or a,b unions, &x intersections, !x exclusions — all
//     unions first, then intersections, then exclusions; names, shell
//     globs (*.example.com), ~regex matched at the start of a name,
//     subscripts web[0], web[-1], web[1:3], web[2:]. Select gives
//     Ansible's order for `ansible PATTERN`; Limit gives inventory order
//     (the order of all), which is what --limit does to a play.
//
// Where it differs, on purpose:
//   - Errors, not warnings: Ansible skips an unparsable file with a
//     warning; here every problem is an *Error naming file:line —
//     unclosed [section, bad ranges, a [g:children] or [g:vars] for a
//     group never declared (Ansible errors too), group loops, and
//     duplicate YAML keys (Ansible warns and keeps the last one).
//   - A ~regex is Go's RE2 syntax, not Python's (no look-around or
//     backreferences); an unsupported one is an error.
//   - Ansible walks grandchild groups in Python set order, so its host
//     order below the second level of groups changes with the hash seed;
//     here it is breadth first, children in declaration order.
//   - No implicit localhost and no inventory plugins; !unsafe values are
//     plain strings; Python sets and complex numbers in INI values stay
//     strings.
//   - A malformed pattern ("web[", "web[1", "~[", "web]"), which
//     Ansible's split drops bits of and so widens to a group or every
//     host, is an error (MalformedPattern). An @FILE limit whose lines
//     are all empty selects nothing (Ansible: every host).
//   - An inventory script runs at most LoadOptions.ScriptTimeout (60 s by
//     default; its process group is then killed); Ansible waits forever.
//
// Sources (sources.go, script.go): LoadSources reads -i given once or
// more as Ansible does: directories (entries in name order, recursively,
// skipping hidden files, group_vars, host_vars and .ini .cfg .retry .md
// .txt and backup files), inventory scripts (executable or #!: --list,
// _meta.hostvars or --host per host), "a,b:2222," host lists, and
// files; then each source's group_vars/ and host_vars/, source by
// source. Ansible Vault (package vault): whole vaulted files (inventories
// and vars files) and !vault values are decrypted with the passwords in
// LoadOptions.Vault; decrypted values are VaultString (JSON: "[vaulted]")
// and Origin.Vault marks what came from a vaulted file: secrets.
//   - Bounded: a range may produce 100,000 names, an inventory 100,000
//     host entries and 1,000,000 host-line variables (hosts times the
//     variables on their line or entry), YAML aliases 1,000,000 nodes.
//     The hosts of one range share their variables until one gets its own.
package inventory
