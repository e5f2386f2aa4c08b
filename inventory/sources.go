package inventory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/autoshell/agent/inventory/vault"
)

// LoadOptions are how LoadSources reads what it is given.
type LoadOptions struct {
	// ScriptTimeout bounds each run of an inventory script (--list and
	// every --host); zero means DefaultScriptTimeout.
	ScriptTimeout time.Duration
	// Vault holds the passwords that decrypt vaulted files and !vault
	// values; nil makes vaulted data an error saying how to give one.
	Vault *vault.Keyring
	// DeferVault leaves the group_vars/ and host_vars/ files of a host or
	// group that hold vaulted data (an encrypted file, a !vault value)
	// unread until Decrypt is given a host that needs them, as Ansible
	// reads vars only for the hosts a run selects: a --limit to hosts
	// without vaulted vars needs no vault password, and no other host's
	// file is decrypted. Until then HostVars lacks their variables.
	DeferVault bool
}

// DefaultScriptTimeout is how long one inventory script run may take.
const DefaultScriptTimeout = 60 * time.Second

// ignoredInDir are the entries of an inventory directory Ansible skips
// (inventory/manager.py IGNORED with INVENTORY_IGNORE_EXTS' default:
// REJECT_EXTS + .orig .ini .cfg .retry — so an .ini file inside a
// directory is not read, as in Ansible).
var ignoredInDir = regexp.MustCompile(`^\.|^host_vars$|^group_vars$|^vars_plugins$|` +
	`(?:\.pyc|\.pyo|\.swp|\.bak|~|\.rpm|\.md|\.txt|\.rst|\.orig|\.ini|\.cfg|\.retry)$`)

// LoadSources reads inventory sources into one inventory, in order, as
// Ansible does with -i given several times:
//   - a directory: every entry, sorted by name, recursively, skipping
//     hidden files, group_vars, host_vars and the extensions Ansible
//     ignores (.ini, .cfg, .retry, .md, .txt, backups…);
//   - an executable file, or one starting with #!: an inventory script,
//     run with --list (and --host NAME per host when its output has no
//     _meta.hostvars), see script.go; if it cannot be run or its output
//     is not an inventory, the file is read as YAML or INI, as Ansible's
//     next plugins would — and if that fails too, the script's error is
//     the one reported;
//   - a file: YAML or INI (Parse), decrypted first when it is vaulted;
//   - a string with a comma that is no file: a host list ("a,b:2222,").
//
// Then group_vars/ and host_vars/ are read from each source's directory
// (a directory source's own, a file's parent), source by source. Every
// problem is an *Error naming the file (and line when there is one).
func LoadSources(sources []string, opts LoadOptions) (*Inventory, error) {
	if len(sources) == 0 {
		return nil, &Error{Msg: "no inventory source given"}
	}
	if opts.ScriptTimeout <= 0 {
		opts.ScriptTimeout = DefaultScriptTimeout
	}
	inv := newInventory(strings.Join(sources, ","))
	inv.vault = opts.Vault
	inv.deferVault = opts.DeferVault
	inv.scriptTimeout = opts.ScriptTimeout
	for _, src := range sources {
		if err := inv.loadSource(src); err != nil {
			return nil, err
		}
	}
	if err := inv.finish(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, src := range sources {
		dir, ok := varsDirOf(src)
		if !ok || seen[dir] {
			continue // a directory's vars apply once however often it is named
		}
		seen[dir] = true
		if err := inv.loadVarsDirs(dir); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// varsDirOf is the directory whose group_vars/ and host_vars/ apply to a
// source; false for a host list.
func varsDirOf(src string) (string, bool) {
	fi, err := os.Stat(src)
	switch {
	case err != nil && strings.Contains(src, ","):
		return "", false
	case err == nil && fi.IsDir():
		return filepath.Clean(src), true
	}
	return filepath.Dir(src), true
}

// maxDirDepth bounds nested inventory directories (a symlink loop).
const maxDirDepth = 32

func (inv *Inventory) loadSource(src string) error {
	return inv.loadPath(src, 0)
}

func (inv *Inventory) loadPath(src string, depth int) error {
	fi, err := os.Stat(src)
	if err != nil {
		if strings.Contains(src, ",") && errors.Is(err, fs.ErrNotExist) {
			inv.addSource(src)
			return inv.parseHostList(src)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &Error{File: src, Msg: fmt.Sprintf("cannot read the inventory: %v", err)}
	}
	if fi.IsDir() {
		if depth >= maxDirDepth {
			return &Error{File: src, Msg: fmt.Sprintf("inventory directories nested more than %d deep", maxDirDepth)}
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return &Error{File: src, Msg: fmt.Sprintf("cannot read the inventory directory: %v", err)}
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if !ignoredInDir.MatchString(e.Name()) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names) // Python sorts the bytes, as Go does
		for _, n := range names {
			if err := inv.loadPath(filepath.Join(src, n), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	inv.addSource(src)
	if isScript(src, fi) {
		serr := inv.runScript(src)
		if serr == nil {
			return nil
		}
		// Ansible's script plugin failed; its yaml and ini plugins try next.
		data, err := inv.readSource(src)
		if err == nil && inv.parseData(src, data) == nil {
			return nil
		}
		return serr
	}
	data, err := inv.readSource(src)
	if err != nil {
		return err
	}
	return inv.parseData(src, data)
}

// maxInventoryFile bounds an inventory file read whole.
const maxInventoryFile = 256 << 20

// readSource reads an inventory file, decrypting it when vaulted.
func (inv *Inventory) readSource(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read the inventory: %v", err)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInventoryFile+1))
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read the inventory: %v", err)}
	}
	if len(data) > maxInventoryFile {
		return nil, &Error{File: file, Msg: fmt.Sprintf("inventory larger than %d bytes", maxInventoryFile)}
	}
	data, vaulted, err := inv.decryptFile(file, data)
	if err != nil {
		return nil, err
	}
	if vaulted {
		if inv.vaultedSrc == nil {
			inv.vaultedSrc = map[int]bool{}
		}
		inv.vaultedSrc[inv.src] = true
	}
	return data, nil
}

// decryptFile decrypts a whole vaulted file; vaulted says it was one.
func (inv *Inventory) decryptFile(file string, data []byte) ([]byte, bool, error) {
	if !vault.IsEncrypted(data) {
		return data, false, nil
	}
	plain, err := inv.vault.Decrypt(data)
	if err != nil {
		return nil, false, &Error{File: file, Msg: fmt.Sprintf("encrypted with Ansible Vault: %v", err)}
	}
	return plain, true, nil
}

// isScript is Ansible's script plugin's verify_file: executable, or
// starting with #!.
func isScript(path string, fi fs.FileInfo) bool {
	if fi.Mode()&0o111 != 0 {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 2 && string(b[:]) == "#!"
}

// parseHostList is Ansible's host_list plugin: "a, b:2222, [::1]:22,".
func (inv *Inventory) parseHostList(list string) error {
	for _, h := range strings.Split(list, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		host, port, ok := parseAddress(h)
		if !ok {
			host, port = h, 0
		}
		if inv.hostIdx[host] != nil {
			continue
		}
		if err := inv.addHosts([]string{host}, inv.groupIdx["ungrouped"], port, nil, nil, nil, 0); err != nil {
			return &Error{File: list, Msg: err.Error()}
		}
	}
	return nil
}
