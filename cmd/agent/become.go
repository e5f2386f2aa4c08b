package main

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
)

// becomeFlags are Ansible's privilege escalation flags.
type becomeFlags struct {
	become  bool
	user    string
	method  string
	askPass bool
	given   []string // the flags given, for commands that take none

	resolved *engine.Become // once the password was asked
}

func (o *becomeFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVarP(&o.become, "become", "b", false, "run every step as the become user (root) through sudo, as Ansible's --become")
	fs.StringVar(&o.user, "become-user", "", "the `USER` steps become (default root)")
	fs.StringVar(&o.method, "become-method", "", "how to become the user: sudo (the only `METHOD` agent supports)")
	fs.BoolVarP(&o.askPass, "ask-become-pass", "K", false, "ask for the sudo password on the terminal (else sudo -n: sudo must not need one)")
}

// mergeBecome applies the become flags given after the command over the
// global ones.
func mergeBecome(dst *becomeFlags, src becomeFlags, fs *pflag.FlagSet) {
	if fs.Changed("become") {
		dst.become = src.become
	}
	if fs.Changed("become-user") {
		dst.user = src.user
	}
	if fs.Changed("become-method") {
		dst.method = src.method
	}
	if fs.Changed("ask-become-pass") {
		dst.askPass = src.askPass
	}
	for _, n := range []string{"become", "become-user", "become-method", "ask-become-pass"} {
		if fs.Lookup(n) != nil && fs.Changed(n) {
			dst.given = append(dst.given, "--"+n)
		}
	}
}

// noBecome refuses become flags for a command that runs nothing on a host.
func (a *app) noBecome(cmd string) error {
	if g := a.host.become.given; len(g) > 0 {
		return usagef("%s: %s: %s runs nothing on a host", cmd, strings.Join(g, ", "), cmd)
	}
	return nil
}

// becomeSettings are the operator's become settings: the flags over the
// config file's become section, with the password asked on the terminal
// once when --ask-become-pass (or ask_pass) says so.
func (a *app) becomeSettings(ctx context.Context) (engine.Become, error) {
	f := &a.host.become
	if f.resolved != nil {
		return *f.resolved, nil
	}
	_, _, file, err := a.loadSections()
	if err != nil {
		return engine.Become{}, err
	}
	b := engine.Become{Enabled: f.become || file.Enabled, User: file.User, Method: file.Method, Exe: file.Exe, Flags: file.Flags}
	if f.user != "" {
		b.User = f.user
	}
	if f.method != "" {
		b.Method = f.method
	}
	if f.askPass || file.AskPass {
		p := newTerminalPrompter()
		if p == nil {
			return engine.Become{}, usagef("--ask-become-pass needs a terminal to ask on; without one give the password as the inventory's ansible_become_password (or configure sudo without a password)")
		}
		pw, err := p.Passphrase(ctx, "BECOME password: ")
		if err != nil {
			return engine.Become{}, err
		}
		b.Password = string(pw)
	}
	if _, err := engine.ResolveBecome(engine.Target{}, b); err != nil {
		return engine.Become{}, err
	}
	f.resolved = &b
	return b, nil
}
