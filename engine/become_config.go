package engine

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/transport/become"
)

// BecomeFile is the config file's become section, Ansible's
// [privilege_escalation] settings:
//
//	become:
//	  enabled: true        # like --become (default false)
//	  user: root           # like --become-user
//	  method: sudo         # the only method agent supports
//	  ask_pass: false      # like --ask-become-pass
//	  exe: /usr/bin/sudo   # the sudo program (ansible_become_exe)
//	  flags: "-H"          # sudo options agent accepts (ansible_become_flags)
//
// A password is never read from the config file.
type BecomeFile struct {
	Enabled bool
	User    string
	Method  string
	AskPass bool
	Exe     string
	Flags   string
}

// DecodeBecomeFile reads the become section. Every key is checked: an
// unknown key, a value of the wrong kind, a method other than sudo, a user
// that is no user name or sudo options agent does not accept is an error
// naming its line.
func DecodeBecomeFile(n *yaml.Node) (*BecomeFile, error) {
	if n == nil || n.Kind == 0 || n.Tag == "!!null" {
		return &BecomeFile{}, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: become: want a mapping of settings", n.Line)
	}
	bf := &BecomeFile{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if seen[key] {
			return nil, fmt.Errorf("line %d: become: %s given twice", k.Line, key)
		}
		seen[key] = true
		bad := func(format string, a ...any) error {
			return fmt.Errorf("line %d: become: %s: %s", v.Line, key, fmt.Sprintf(format, a...))
		}
		str := func() (string, error) {
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || (v.Tag != "!!str" && v.Tag != "!!int" && v.Tag != "!!float") {
				return "", bad("want a string")
			}
			return strings.TrimSpace(v.Value), nil
		}
		boolean := func() (bool, error) {
			var b bool
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
				return false, bad("want true or false")
			}
			return b, nil
		}
		var err error
		switch key {
		case "enabled":
			bf.Enabled, err = boolean()
		case "ask_pass":
			bf.AskPass, err = boolean()
		case "user":
			if bf.User, err = str(); err == nil {
				if cerr := become.CheckUser(bf.User); cerr != nil {
					err = bad("%v", cerr)
				}
			}
		case "method":
			if bf.Method, err = str(); err == nil {
				if cerr := become.CheckMethod(bf.Method); cerr != nil {
					err = bad("%v", cerr)
				}
			}
		case "exe":
			if bf.Exe, err = str(); err == nil {
				if cerr := become.CheckExe(bf.Exe); cerr != nil {
					err = bad("%v", cerr)
				}
			}
		case "flags":
			if bf.Flags, err = str(); err == nil {
				if _, cerr := become.ParseFlags(bf.Flags); cerr != nil {
					err = bad("%v", cerr)
				}
			}
		case "password", "pass", "become_pass", "become_password":
			err = fmt.Errorf("line %d: become: a password is never read from the config file: use --ask-become-pass (-K) or the inventory's ansible_become_password", k.Line)
		default:
			err = fmt.Errorf("line %d: become: unknown key %q (known: enabled, user, method, ask_pass, exe, flags)", k.Line, key)
		}
		if err != nil {
			return nil, err
		}
	}
	return bf, nil
}
