package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/autoshell/agent/inventory"
	"github.com/autoshell/agent/transport/ssh"
	"github.com/spf13/pflag"
)

// runCompletion is `agent completion bash|zsh|fish|hosts`: a completion
// script for a shell, or the host names the scripts offer after
// --ssh-host and --limit.
func runCompletion(ctx context.Context, a *app, args []string) error {
	usage := func(w io.Writer) {
		fmt.Fprint(w, "Usage: agent completion bash|zsh|fish\n       agent completion hosts [-i SOURCE]… [-F FILE]\n\n"+
			"Print a completion script for the shell: sub-commands, their flags and the values\n"+
			"of --approve and --mode; files where a flag takes a file; after\n"+
			"--ssh-host and --limit the Host names of ~/.ssh/config (and what it includes) and,\n"+
			"when -i is on the line, the inventory's hosts and groups. Load it with\n"+
			"  bash: source <(agent completion bash)          (e.g. in ~/.bashrc)\n"+
			"  zsh:  source <(agent completion zsh)           (after compinit, in ~/.zshrc)\n"+
			"  fish: agent completion fish | source           (or save it in ~/.config/fish/completions/agent.fish)\n\n"+
			"`agent completion hosts` prints those names, one a line. It reads inventory files\n"+
			"and directories as text: it runs no inventory script and decrypts no vault (a\n"+
			"key press must not run a program or ask for a password); their hosts are not offered.\n")
	}
	if len(args) == 0 || isHelp(args[0]) {
		usage(a.stdout)
		if len(args) == 0 {
			return usagef("completion: want a shell: bash, zsh or fish (or hosts)")
		}
		return pflag.ErrHelp
	}
	shell, rest := args[0], args[1:]
	if shell == "hosts" {
		return completionHosts(a, rest)
	}
	if len(rest) > 0 {
		return usagef("completion %s takes no arguments (got %q)", shell, rest)
	}
	spec := completionSpecOf(ctx)
	switch shell {
	case "bash":
		return spec.bash(a.stdout)
	case "zsh":
		return spec.zsh(a.stdout)
	case "fish":
		return spec.fish(a.stdout)
	}
	return usagef("completion: unknown shell %q (want bash, zsh or fish)", shell)
}

// completionHosts prints the names offered for a host: ~/.ssh/config's
// (or -F's) Host names, then the -i inventories' hosts and groups.
func completionHosts(a *app, args []string) error {
	fs := pflag.NewFlagSet("completion hosts", pflag.ContinueOnError)
	sources := fs.StringArrayP("inventory", "i", nil, "an inventory `SOURCE` whose hosts and groups to list")
	cfg := fs.StringP("ssh-config", "F", "", "read Host names from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config")
	if err := a.parseFlags(fs, args, func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent completion hosts [-i SOURCE]… [-F FILE]\n\nFlags:\n%s", fs.FlagUsages())
	}); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("completion hosts takes no arguments (got %q)", fs.Args())
	}
	seen := map[string]bool{}
	emit := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			fmt.Fprintln(a.stdout, n)
		}
	}
	// A name that cannot be read is not offered; completion never fails
	// a key press.
	if names, err := ssh.HostAliases(ssh.ResolveOptions{ConfigFile: *cfg}); err == nil {
		for _, n := range names {
			emit(n)
		}
	}
	for _, src := range *sources {
		for _, n := range inventoryNames(src) {
			emit(n)
		}
	}
	return nil
}

// inventoryNames lists the hosts and groups of an inventory source read
// as text: a file, the files directly in a directory, or a host list.
// Scripts (executable, or starting with #!) and vaulted files are
// skipped.
func inventoryNames(src string) []string {
	fi, err := os.Stat(src)
	if err != nil {
		if strings.Contains(src, ",") { // "a,b:2222,"
			var out []string
			for _, h := range strings.Split(src, ",") {
				if h = strings.TrimSpace(h); h != "" {
					out = append(out, h)
				}
			}
			return out
		}
		return nil
	}
	files := []string{src}
	if fi.IsDir() {
		entries, err := os.ReadDir(src)
		if err != nil {
			return nil
		}
		files = files[:0]
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
				files = append(files, filepath.Join(src, e.Name()))
			}
		}
	}
	var out []string
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 != 0 || fi.Size() > 4<<20 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil || bytes.HasPrefix(data, []byte("#!")) || bytes.HasPrefix(data, []byte("$ANSIBLE_VAULT")) {
			continue
		}
		inv, err := inventory.Parse(f, data)
		if err != nil {
			continue
		}
		for _, h := range inv.Hosts() {
			out = append(out, h.Name)
		}
		for _, g := range inv.Groups() {
			out = append(out, g.Name)
		}
	}
	return out
}

// completionSpec is what the scripts complete, read from agent's own
// --help texts so that it cannot fall behind the flags.
type completionSpec struct {
	commands []string
	global   []string            // the flags before a command
	flags    map[string][]string // a command's flags
	subs     map[string][]string // a command's sub-commands
	values   map[string]string   // a flag that takes a value: its kind
}

// Kinds of flag values.
const (
	valueFile  = "file"
	valueHost  = "host"
	valueOther = "other"
)

// enumValues are the values a flag accepts, offered as they are.
var enumValues = map[string][]string{
	"--approve": {"ask", "never", "medium", "all"},
	"--mode":    {"adaptive", "react"},
}

var subCommands = map[string][]string{
	"audit":      {"verify"},
	"config":     {"set-llm", "show"},
	"inventory":  {"list"},
	"completion": {"bash", "zsh", "fish", "hosts"},
}

// usageFlag matches a flag line of pflag's FlagUsages: "  -i, --inventory
// SOURCE   …" or "      --json   …".
var usageFlag = regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([A-Za-z0-9][A-Za-z0-9-]*)(?: (\S+))?(?:\s{2,}|$)`)

func completionSpecOf(ctx context.Context) completionSpec {
	s := completionSpec{flags: map[string][]string{}, subs: subCommands, values: map[string]string{}}
	help := func(args ...string) []string {
		var out bytes.Buffer
		b := &app{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard}
		_ = b.main(ctx, args)
		return s.readFlags(out.String())
	}
	s.global = help("--help")
	for _, c := range commands() {
		s.commands = append(s.commands, c.name)
		if c.name == "completion" {
			s.flags[c.name] = []string{"--help"}
			continue
		}
		fl := help(c.name, "--help")
		for _, sub := range subCommands[c.name] {
			fl = append(fl, help(c.name, sub, "--help")...)
		}
		s.flags[c.name] = dedup(fl)
	}
	s.commands = append(s.commands, "help")
	return s
}

// readFlags lists the flags of a --help text (long, then short) and
// records what kind of value each takes.
func (s completionSpec) readFlags(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		m := usageFlag.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		names := []string{"--" + m[2]}
		if m[1] != "" {
			names = append(names, "-"+m[1])
		}
		for _, n := range names {
			out = append(out, n)
			// MODE[="on"]: an optional value, given only as --flag=VALUE.
			if m[3] != "" && !strings.Contains(m[3], "[=") {
				s.values[n] = valueKind(m[2], m[3])
			}
		}
	}
	out = append(out, "--help")
	return out
}

// valueKind is what a flag's value names: a file, a host, or another value.
func valueKind(name, value string) string {
	v := strings.Trim(value, "[]=\"")
	switch {
	case name == "ssh-host" || name == "limit":
		return valueHost
	case strings.HasSuffix(v, "FILE"), v == "DIR", v == "SOURCE", v == "PATH", v == "SOCKET":
		return valueFile
	}
	return valueOther
}

func dedup(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// byKind lists the flags taking each kind of value, sorted.
func (s completionSpec) byKind(kind string) []string {
	var out []string
	for f, k := range s.values {
		if k == kind {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func shellVar(cmd string) string { return strings.ReplaceAll(cmd, "-", "_") }
