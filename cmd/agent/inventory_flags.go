package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/inventory/vault"
	"github.com/spf13/pflag"
)

// inventoryFlags name an inventory as Ansible's commands do: -i once or
// more (files, directories, scripts, "a,b," host lists) and the vault
// passwords that decrypt it.
type inventoryFlags struct {
	sources    []string // -i, in order
	vaultFiles []string // --vault-password-file
	vaultIDs   []string // --vault-id [ID@]FILE|prompt
	askVault   bool     // --ask-vault-pass
}

func (f *inventoryFlags) addFlags(fs *pflag.FlagSet, usage string) {
	fs.StringArrayVarP(&f.sources, "inventory", "i", nil, usage+" (a file, directory, script or host list; may be given more than once)")
	fs.StringArrayVar(&f.vaultFiles, "vault-password-file", nil, "read the Ansible Vault password from `FILE` (run it if it is executable)")
	fs.StringArrayVar(&f.vaultIDs, "vault-id", nil, "an Ansible Vault id and its password source: `[ID@]FILE` or [ID@]prompt")
	fs.BoolVar(&f.askVault, "ask-vault-pass", false, "ask for the Ansible Vault password on the terminal")
}

// given reports whether an inventory was named.
func (f inventoryFlags) given() bool { return len(f.sources) > 0 }

// name is how messages and commands name the inventory.
func (f inventoryFlags) name() string { return strings.Join(f.sources, ",") }

// args are the flags that name the same inventory again (the undo
// command printed after a batch run); vault passwords are named by their
// files, never shown.
func (f inventoryFlags) args(quote func(string) string) []string {
	var out []string
	for _, s := range f.sources {
		out = append(out, "-i", quote(s))
	}
	for _, v := range f.vaultFiles {
		out = append(out, "--vault-password-file", quote(v))
	}
	for _, v := range f.vaultIDs {
		out = append(out, "--vault-id", quote(v))
	}
	if f.askVault {
		out = append(out, "--ask-vault-pass")
	}
	return out
}

// mergeInventory takes the inventory flags given after a command over the
// global ones.
func mergeInventory(dst *inventoryFlags, src inventoryFlags, fs *pflag.FlagSet) {
	if fs.Changed("inventory") {
		dst.sources = src.sources
	}
	if fs.Changed("vault-password-file") {
		dst.vaultFiles = src.vaultFiles
	}
	if fs.Changed("vault-id") {
		dst.vaultIDs = src.vaultIDs
	}
	if fs.Changed("ask-vault-pass") {
		dst.askVault = src.askVault
	}
}

// vaultGiven reports whether a vault flag was given.
func (f inventoryFlags) vaultGiven() bool {
	return len(f.vaultFiles) > 0 || len(f.vaultIDs) > 0 || f.askVault
}

// spec reads the vault passwords (running password scripts, asking on the
// terminal) and returns what the engine loads the inventory from. A
// password that cannot be had is a usage error (exit 2): nothing ran.
func (f inventoryFlags) spec(ctx context.Context) (engine.InventorySpec, error) {
	s := engine.InventorySpec{Sources: f.sources}
	if !f.vaultGiven() {
		return s, nil
	}
	var secrets []vault.Secret
	ask := func(id string) error {
		p := newTerminalPrompter()
		if p == nil {
			return usagef("--ask-vault-pass: no terminal to ask on; use --vault-password-file")
		}
		prompt := "Vault password: "
		if id != vault.DefaultID {
			prompt = fmt.Sprintf("Vault password (%s): ", id)
		}
		pw, err := p.Passphrase(ctx, prompt)
		if err != nil {
			return fmt.Errorf("vault password: %w", err)
		}
		if len(pw) == 0 {
			return usagef("vault password: empty")
		}
		secrets = append(secrets, vault.Secret{ID: id, Password: pw})
		return nil
	}
	for _, v := range f.vaultIDs {
		id, src := vault.ParseID(v)
		if src == "prompt" {
			if err := ask(id); err != nil {
				return s, err
			}
			continue
		}
		pw, err := vault.PasswordFromFile(ctx, src)
		if err != nil {
			return s, usagef("--vault-id %s: %v", v, err)
		}
		secrets = append(secrets, vault.Secret{ID: id, Password: pw})
	}
	for _, file := range f.vaultFiles {
		pw, err := vault.PasswordFromFile(ctx, file)
		if err != nil {
			return s, usagef("--vault-password-file: %v", err)
		}
		secrets = append(secrets, vault.Secret{ID: vault.DefaultID, Password: pw})
	}
	if f.askVault {
		if err := ask(vault.DefaultID); err != nil {
			return s, err
		}
	}
	s.Vault = vault.NewKeyring(secrets...)
	return s, nil
}

// warnInventory prints, once each, the inventory variables agent does not
// act on for the selected hosts (engine.InventoryWarnings).
func (a *app) warnInventory(hosts []engine.Target) {
	for _, w := range engine.InventoryWarnings(hosts) {
		fmt.Fprintf(a.stderr, "agent: warning: %s\n", w)
	}
}
