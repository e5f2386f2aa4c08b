package inventory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// varsExtensions are the file names Ansible's host_group_vars plugin reads
// (C.YAML_FILENAME_EXTENSIONS, and no extension).
var varsExtensions = []string{"", ".yml", ".yaml", ".json"}

// loadVarsDirs reads group_vars/ and host_vars/ beside the inventory file
// as Ansible's host_group_vars plugin does: for a group or host named N,
// the first of N, N.yml, N.yaml, N.json that exists; if that is a
// directory, every file in it (recursively, sorted, skipping hidden files,
// backups ending in ~ and other extensions), merged in that order. Each
// file is a YAML mapping; an empty file adds nothing.
func (inv *Inventory) loadVarsDirs(dir string) error {
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
				if vars != nil {
					if inv.groupFileVars == nil {
						inv.groupFileVars = map[*Group]map[string]any{}
					}
					inv.groupFileVars[g] = vars
				}
			}
			continue
		}
		for _, h := range inv.hosts {
			vars, err := inv.readVarsFiles(base, h.Name)
			if err != nil {
				return err
			}
			if vars != nil {
				if inv.hostFileVars == nil {
					inv.hostFileVars = map[*Host]map[string]any{}
				}
				inv.hostFileVars[h] = vars
			}
		}
	}
	return nil
}

// readVarsFiles merges the vars files for the entity name under base, or
// returns nil when there are none.
func (inv *Inventory) readVarsFiles(base, name string) (map[string]any, error) {
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
	var out map[string]any
	for _, f := range files {
		vars, err := readVarsFile(f)
		if err != nil {
			return nil, err
		}
		if len(vars) == 0 {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		for k, v := range vars {
			out[k] = v
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

// readVarsFile reads one vars file: a YAML mapping, or nothing.
func readVarsFile(file string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read vars file: %v", err)}
	}
	p := &yamlParser{inv: newInventory(file), file: file, json: json.Valid(data)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.yamlError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind == yaml.ScalarNode && isNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.fail(root, "a vars file must hold a mapping of variables, found %s", yamlKind(root))
	}
	v, err := p.value(root, 0)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}
