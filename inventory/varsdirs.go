package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/autoshell/agent/inventory/vault"
	"gopkg.in/yaml.v3"
)

// varsExtensions are the file names Ansible's host_group_vars plugin reads
// (C.YAML_FILENAME_EXTENSIONS, and no extension).
var varsExtensions = []string{"", ".yml", ".yaml", ".json"}

// loadVarsDirs reads group_vars/ and host_vars/ in dir as Ansible's
// host_group_vars plugin does: for a group or host named N,
// the first of N, N.yml, N.yaml, N.json that exists; if that is a
// directory, every file in it (recursively, sorted, skipping hidden files,
// backups ending in ~ and other extensions), merged in that order. Each
// file is a YAML mapping; an empty file adds nothing. A file encrypted
// with Ansible Vault is decrypted first.
func (inv *Inventory) loadVarsDirs(dir string) error {
	d := varsDir{}
	for _, sub := range []string{"group_vars", "host_vars"} {
		base := filepath.Join(dir, sub)
		fi, err := os.Stat(base)
		if err != nil || !fi.IsDir() {
			continue
		}
		if real, err := filepath.EvalSymlinks(base); err == nil {
			base = real
		}
		if sub == "group_vars" {
			for _, g := range inv.groups {
				vars, err := inv.readVarsFiles(base, g.Name)
				if err != nil {
					return err
				}
				if vars.vars != nil || vars.deferred != nil {
					if d.groups == nil {
						d.groups = map[*Group]varsFile{}
					}
					d.groups[g] = vars
				}
			}
			continue
		}
		for _, h := range inv.hosts {
			vars, err := inv.readVarsFiles(base, h.Name)
			if err != nil {
				return err
			}
			if vars.vars != nil || vars.deferred != nil {
				if d.hosts == nil {
					d.hosts = map[*Host]varsFile{}
				}
				d.hosts[h] = vars
			}
		}
	}
	if d.groups != nil || d.hosts != nil {
		inv.dirs = append(inv.dirs, d)
	}
	return nil
}

// readVarsFiles merges the vars files for the entity name under base
// (vars is nil when there are none), or defers them (DeferVault).
func (inv *Inventory) readVarsFiles(base, name string) (varsFile, error) {
	files, err := findVarsFiles(base, name)
	if err != nil {
		return varsFile{}, err
	}
	if inv.deferVault && anyVaulted(files) {
		return varsFile{deferred: &deferredVars{base: base, name: name}}, nil
	}
	return inv.mergeVarsFiles(files)
}

// findVarsFiles lists the vars files for the entity name under base, in
// the order they merge.
func findVarsFiles(base, name string) ([]string, error) {
	if strings.HasPrefix(name, string(filepath.Separator)) || name == "" {
		return nil, nil // Ansible skips "chroot"-style names
	}
	var files []string
	for _, ext := range varsExtensions {
		p := filepath.Join(base, name) + ext
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			found, err := dirVarsFiles(p)
			if err != nil {
				return nil, &Error{File: p, Msg: fmt.Sprintf("cannot read vars directory: %v", err)}
			}
			files = found
		} else {
			files = []string{p}
		}
		break
	}
	return files, nil
}

// anyVaulted reports whether one of files holds vaulted data: it is
// encrypted whole, or it has a !vault value (a file that cannot be read
// counts: reading it later reports the error).
func anyVaulted(files []string) bool {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || vault.IsEncrypted(data) || bytes.Contains(data, []byte("!vault")) {
			return true
		}
	}
	return false
}

// mergeVarsFiles reads files in order, a later file's variable over an
// earlier one's.
func (inv *Inventory) mergeVarsFiles(files []string) (varsFile, error) {
	var out varsFile
	for _, f := range files {
		vars, err := inv.readVarsFile(f)
		if err != nil {
			return varsFile{}, err
		}
		if len(vars.vars) == 0 {
			continue
		}
		if out.vars == nil {
			out = varsFile{vars: map[string]any{}, origin: map[string]Origin{}}
		}
		for k, v := range vars.vars {
			out.vars[k] = v
			out.origin[k] = vars.origin[k]
		}
	}
	return out, nil
}

// dirVarsFiles is Ansible's DataLoader._get_dir_vars_files.
func dirVarsFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var found []string
	for _, n := range names {
		if strings.HasPrefix(n, ".") || strings.HasSuffix(n, "~") {
			continue
		}
		full := filepath.Join(dir, n)
		ext := filepath.Ext(n)
		fi, err := os.Stat(full)
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir() && ext == "":
			more, err := dirVarsFiles(full)
			if err != nil {
				return nil, err
			}
			found = append(found, more...)
		case fi.Mode().IsRegular() && (ext == "" || ext == ".yml" || ext == ".yaml" || ext == ".json"):
			found = append(found, full)
		}
	}
	return found, nil
}

// readVarsFile reads one vars file: a YAML mapping, or nothing; a file
// encrypted with Ansible Vault is decrypted and its variables are secrets.
func (inv *Inventory) readVarsFile(file string) (varsFile, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return varsFile{}, &Error{File: file, Msg: fmt.Sprintf("cannot read vars file: %v", err)}
	}
	data, vaulted, err := inv.decryptFile(file, data)
	if err != nil {
		return varsFile{}, err
	}
	p := &yamlParser{inv: newInventory(file), file: file, json: json.Valid(data), vault: inv.vault}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return varsFile{}, p.yamlError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return varsFile{}, nil
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind == yaml.ScalarNode && isNull(root) {
		return varsFile{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return varsFile{}, p.fail(root, "a vars file must hold a mapping of variables, found %s", yamlKind(root))
	}
	pairs, err := p.pairs(root)
	if err != nil {
		return varsFile{}, err
	}
	out := varsFile{vars: make(map[string]any, len(pairs)), origin: make(map[string]Origin, len(pairs))}
	for _, kv := range pairs {
		v, err := p.value(kv.val, 1)
		if err != nil {
			return varsFile{}, err
		}
		k := keyString(kv.key)
		out.vars[k], out.origin[k] = v, Origin{File: file, Line: kv.keyNode.Line, Vault: vaulted || hasVault(v)}
	}
	return out, nil
}

// Decrypt reads the vars files DeferVault left unread that hosts need:
// each host's own and those of every group it is in. The first that
// cannot be read or decrypted is the error, naming its file. A host not
// given stays without them.
func (inv *Inventory) Decrypt(hosts []*Host) error {
	for _, d := range inv.dirs {
		for _, h := range hosts {
			if err := undefer(inv, d.hosts, h); err != nil {
				return err
			}
			for _, g := range inv.hostGroups(h) {
				if err := undefer(inv, d.groups, g); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// undefer reads m[k]'s files if they were deferred.
func undefer[K comparable](inv *Inventory, m map[K]varsFile, k K) error {
	v, ok := m[k]
	if !ok || v.deferred == nil {
		return nil
	}
	files, err := findVarsFiles(v.deferred.base, v.deferred.name)
	if err != nil {
		return err
	}
	r, err := inv.mergeVarsFiles(files)
	if err != nil {
		return err
	}
	m[k] = r
	return nil
}
