package engine

import (
	"fmt"
	"strings"

	"github.com/autoshell/agent/inventory"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// sshArgVars are the inventory variables Ansible's ssh connection adds to
// ssh's command line, in the order it adds them (ssh_args first, then the
// common and the extra ones); with first-value-wins, that order is their
// precedence.
var sshArgVars = []string{"ansible_ssh_args", "ansible_ssh_common_args", "ansible_ssh_extra_args"}

// sshOptionsWithArg are ssh(1)'s options that take an argument.
const sshOptionsWithArg = "BbcDEeFIiJLlmOoPpQRSWw"

// parseSSHArgs reads one of sshArgVars as ssh reads its command line
// (split like Python's shlex.split, as Ansible does): -o KEY=VALUE, -J,
// -i, -p and -l become ssh_config lines, which apply before the config
// files as ssh's own -o options do. Anything agent cannot act on — -o
// keywords it has no use for (ControlPersist, ForwardAgent…), other flags
// (-C, -A, -L…) — is returned in ignored to be named in a warning. A
// value that does not split, a flag missing its argument or an operand
// (ssh would take it for the destination) is an error.
func parseSSHArgs(s string) (opts, ignored []string, err error) {
	words, err := inventory.SplitArgs(s)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if len(w) < 2 || w[0] != '-' || w == "--" {
			return nil, nil, fmt.Errorf("%q is not an ssh option (a destination or command cannot be given here)", w)
		}
		for j := 1; j < len(w); j++ {
			c := w[j]
			if !strings.ContainsRune(sshOptionsWithArg, rune(c)) {
				if !isSSHFlag(c) {
					return nil, nil, fmt.Errorf("unknown ssh option -%c", c)
				}
				ignored = append(ignored, "-"+string(c))
				continue
			}
			arg := w[j+1:]
			if arg == "" {
				if i+1 >= len(words) {
					return nil, nil, fmt.Errorf("ssh option -%c needs an argument", c)
				}
				i++
				arg = words[i]
			}
			switch c {
			case 'o':
				kw, _, _ := strings.Cut(strings.TrimSpace(arg), "=")
				kw, _, _ = strings.Cut(kw, " ")
				kw, _, _ = strings.Cut(kw, "\t")
				switch strings.ToLower(kw) {
				case "host", "match", "include":
					return nil, nil, fmt.Errorf("-o %s: %s directive not supported as a command-line option", arg, kw)
				}
				if !sshtr.Keywords[strings.ToLower(kw)] {
					ignored = append(ignored, "-o "+arg)
					break
				}
				opts = append(opts, arg)
			case 'J':
				opts = append(opts, "ProxyJump "+arg)
			case 'i':
				opts = append(opts, "IdentityFile "+arg)
			case 'p':
				opts = append(opts, "Port "+arg)
			case 'l':
				opts = append(opts, "User "+arg)
			default:
				ignored = append(ignored, "-"+string(c)+" "+arg)
			}
			break
		}
	}
	return opts, ignored, nil
}

// isSSHFlag reports whether c is one of ssh(1)'s options without an
// argument.
func isSSHFlag(c byte) bool { return strings.IndexByte("46AaCfGgKkMNnqsTtVvXxYy", c) >= 0 }
