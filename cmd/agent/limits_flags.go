package main

import (
	"fmt"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
)

// limitOptions are --allow-write and --read-only: limits on what the steps
// of `agent -c`, the REPL, a batch, `agent run` and `agent mcp` may do,
// over the config file's `limits:` section.
type limitOptions struct {
	allowWrite []string
	readOnly   bool
}

func (o *limitOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.allowWrite, "allow-write", nil, "let steps write only under `PATH` (repeatable; absolute or ~/…, a glob allowed; the file tools too); with --sandbox, the paths the kernel lets every command write beside the working and temp directories")
	fs.BoolVar(&o.readOnly, "read-only", false, "run only safe steps and no file tool that writes, whatever --approve says")
}

// merge adds the limits given after a command to those given before it.
func (o *limitOptions) merge(src limitOptions, fs *pflag.FlagSet) {
	if fs.Changed("allow-write") {
		o.allowWrite = append(o.allowWrite, src.allowWrite...)
	}
	if fs.Changed("read-only") {
		o.readOnly = o.readOnly || src.readOnly
	}
}

func (o limitOptions) given() []string {
	var out []string
	if len(o.allowWrite) > 0 {
		out = append(out, "--allow-write")
	}
	if o.readOnly {
		out = append(out, "--read-only")
	}
	return out
}

// limitsFile is the config file's `limits:` section.
type limitsFile struct {
	AllowWrite []string `yaml:"allow_write"`
	ReadOnly   bool     `yaml:"read_only"`
}

func decodeLimitsFile(n *yaml.Node) (limitsFile, error) {
	var f limitsFile
	if n.Kind != yaml.MappingNode {
		return f, fmt.Errorf("line %d: limits must be a mapping (allow_write, read_only)", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "allow_write" && k != "read_only" {
			return f, fmt.Errorf("line %d: unknown key %q in limits (known: allow_write, read_only)", n.Content[i].Line, k)
		}
	}
	if err := n.Decode(&f); err != nil {
		return f, fmt.Errorf("limits: %w", err)
	}
	return f, nil
}

// applyLimits puts the config's limits and the flags' into p: the paths
// checked (a usage error names the bad one), a plain path standing for
// its tree.
func applyLimits(p *safety.Policy, file limitsFile, flags limitOptions) error {
	for _, s := range file.AllowWrite {
		g, err := engine.ParseAllowWrite(s)
		if err != nil {
			return usagef("config limits: allow_write: %v", err)
		}
		p.AllowWrite = append(p.AllowWrite, g)
	}
	for _, s := range flags.allowWrite {
		g, err := engine.ParseAllowWrite(s)
		if err != nil {
			return usagef("--allow-write: %v", err)
		}
		p.AllowWrite = append(p.AllowWrite, g)
	}
	p.OnlySafe = file.ReadOnly || flags.readOnly
	if err := engine.CheckSandbox(*p); err != nil {
		return usagef("--allow-write with --sandbox: %v", err)
	}
	return nil
}
