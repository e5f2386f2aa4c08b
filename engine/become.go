package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/become"
)

// Become is the operator's become settings: --become, --become-user,
// --become-method, the password asked by --ask-become-pass, and the
// config file's become section. An inventory host's ansible_become*
// variables beat them, as in Ansible.
type Become struct {
	// Enabled runs every step as User (--become).
	Enabled bool
	// User is who steps become; "" is root.
	User string
	// Method must be sudo (or "").
	Method string
	// Password is the become password (-K); a secret.
	Password string
	// Exe is the sudo program; Flags extra sudo options (as in
	// ansible_become_flags).
	Exe, Flags string
}

// HostBecome is one host's become settings.
type HostBecome struct {
	// Config says how to become (user, password, sudo program, options).
	Config become.Config
	// All runs every step through become: the operator or the inventory
	// enabled it. Otherwise only plan steps with become: true escalate,
	// and the model may not ask to.
	All bool
}

// becomeVars are the become settings as the inventory may give them:
// the variables that say each, in the order of Ansible's sudo plugin,
// where the last one set wins (Ansible's config manager).
var becomeVars = []struct{ key, names string }{
	{"enabled", "ansible_become"},
	{"user", "ansible_become_user ansible_sudo_user"},
	{"method", "ansible_become_method"},
	{"password", "ansible_become_password ansible_become_pass ansible_sudo_pass"},
	{"exe", "ansible_become_exe ansible_sudo_exe"},
	{"flags", "ansible_become_flags ansible_sudo_flags"},
}

// inventoryBecome reads an inventory host's become variables (templates
// rendered) into Target.BecomeVars: key → value, and where it was set.
func inventoryBecome(c *connVars) (map[string]BecomeVar, error) {
	out := map[string]BecomeVar{}
	for _, bv := range becomeVars {
		v, key, err := c.get(strings.Fields(bv.names)...)
		if err != nil {
			return nil, err
		}
		if key != "" {
			out[bv.key] = BecomeVar{Name: key, Value: v, Origin: c.origin(key)}
		}
	}
	return out, nil
}

// BecomeVar is one become setting an inventory host gives.
type BecomeVar struct {
	// Name is the variable (ansible_become_user…), Value its rendered
	// value, Origin where it was set (FILE:LINE).
	Name, Value, Origin string
}

// ResolveBecome gives t its become settings: the inventory host's
// variables over the operator's o. Every setting agent cannot act on — a
// method other than sudo, a user that is no user name, sudo options it
// does not know, ansible_become that is not a boolean — is a ConfigError
// naming the variable and the host: a host whose inventory asks for root
// never runs as the login user instead.
func ResolveBecome(t Target, o Become) (*HostBecome, error) {
	name := t.Name
	if name == "" {
		name = "the host"
	}
	get := func(key, flag, cur string) (string, func(error) error) {
		if v, ok := t.BecomeVars[key]; ok {
			return v.Value, func(err error) error {
				return configf("%s: inventory host %s: %s: %v", v.Origin, name, v.Name, err)
			}
		}
		return cur, func(err error) error { return configf("%s: %v", flag, err) }
	}
	hb := &HostBecome{All: o.Enabled}
	if v, ok := t.BecomeVars["enabled"]; ok {
		b, ok := ansibleBool(v.Value)
		if !ok {
			return nil, configf("%s: inventory host %s: %s=%q is not a boolean (yes/no, true/false)", v.Origin, name, v.Name, v.Value)
		}
		hb.All = b
	}
	m, fail := get("method", "--become-method", o.Method)
	if err := become.CheckMethod(m); err != nil {
		return nil, fail(err)
	}
	u, fail := get("user", "--become-user", o.User)
	if u = strings.TrimSpace(u); u == "" {
		u = become.DefaultUser
	}
	if err := become.CheckUser(u); err != nil {
		return nil, fail(err)
	}
	hb.Config.User = u
	pw, fail := get("password", "--ask-become-pass", o.Password)
	hb.Config.Password = pw
	if err := (become.Config{Password: pw}).Validate(); err != nil {
		return nil, fail(err)
	}
	exe, fail := get("exe", "become exe", o.Exe)
	if err := become.CheckExe(strings.TrimSpace(exe)); err != nil {
		return nil, fail(err)
	}
	hb.Config.Exe = strings.TrimSpace(exe)
	flags, fail := get("flags", "become flags", o.Flags)
	if strings.TrimSpace(flags) != "" {
		f, err := become.ParseFlags(flags)
		if err != nil {
			return nil, fail(err)
		}
		hb.Config.Flags = f
	}
	return hb, nil
}

// ansibleBool reads a boolean as Ansible's boolean() does.
func ansibleBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "on", "1", "true", "t", "1.0":
		return true, true
	case "n", "no", "off", "0", "false", "f", "0.0", "":
		return false, true
	}
	return false, false
}

// becomeRestorer returns, for undo, the restorer acting as user through
// tr with hb's password and sudo settings (the journal says who changed
// each file; hb nil: sudo without a password).
func becomeRestorer(tr transport.Transport, hb *HostBecome) func(user string) (journal.FileRestorer, error) {
	return func(user string) (journal.FileRestorer, error) {
		var cfg become.Config
		if hb != nil {
			cfg = hb.Config
		}
		cfg.User = user
		bt, err := become.New(tr, cfg)
		if err != nil {
			return nil, err
		}
		return restorer{bt}, nil
	}
}

// checkBecome tries sudo once on a host whose every step becomes, so that
// a wrong password or a sudo that wants a terminal fails the host before
// its first step.
func (h *Host) checkBecome(ctx context.Context) error {
	if h.become == nil || !h.becomeAll {
		return nil
	}
	if err := h.become.Check(ctx); err != nil {
		return fmt.Errorf("become %s: %w", h.become.User(), err)
	}
	return nil
}

// BecomeTransport is tr as hb's user, for a front end's own command
// (agent exec): it does not own tr.
func BecomeTransport(tr transport.Transport, hb *HostBecome) (transport.Transport, error) {
	bt, err := become.New(tr, hb.Config)
	if err != nil {
		return nil, ConfigError{err}
	}
	return bt, nil
}
