package planner

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/safety"
)

// permissionKeys are the keys of a plan's `permissions:` block.
var permissionKeys = []string{"read", "write", "run", "network"}

// permissions reads a plan's `permissions:` block:
//
//	permissions:
//	  read: [/etc/nginx/**, ~/app/**]   # path globs: absolute or ~/…
//	  write: [~/app/config.yml]
//	  run: [nginx, systemctl, ~/app/bin/*]
//	  network: no                        # yes | no
//
// A key left out allows nothing (network: no): the block is the whole
// contract. `permissions: {}` allows only steps that touch nothing.
func (p *parser) permissions(n *yaml.Node) *safety.Permissions {
	if n == nil {
		return nil
	}
	perms := &safety.Permissions{Source: fmt.Sprintf("%s:%d", p.src, n.Line),
		Read: safety.Globs{Limited: true}, Write: safety.Globs{Limited: true}, Run: safety.Globs{Limited: true},
		Network: safety.NetworkRule{Limited: true}}
	if key := p.keys[n]; key != nil {
		perms.Source = fmt.Sprintf("%s:%d", p.src, key.Line)
	}
	if isNull(n) {
		p.errorf(n, "`permissions` is empty: write `permissions: {}` to allow nothing, or list read, write, run, network")
		return perms
	}
	f, ok := p.fields(n, "permissions", permissionKeys)
	if !ok {
		return perms
	}
	perms.Read.List = p.globs(f["read"], "read", safety.ParsePathGlob)
	perms.Write.List = p.globs(f["write"], "write", safety.ParsePathGlob)
	perms.Run.List = p.globs(f["run"], "run", safety.ParseProgramGlob)
	if nn := f["network"]; nn != nil {
		switch {
		case nn.Kind == yaml.ScalarNode && nn.ShortTag() == "!!bool":
			var b bool
			_ = nn.Decode(&b)
			perms.Network.Allowed = b
		case nn.Kind == yaml.ScalarNode && nn.ShortTag() == "!!str" && (nn.Value == "yes" || nn.Value == "no"):
			perms.Network.Allowed = nn.Value == "yes"
		default:
			p.errorf(nn, "permissions: `network` must be yes or no, not %s", kindOf(nn))
		}
	}
	return perms
}

// globs reads a list of permission patterns, each checked by parse.
func (p *parser) globs(n *yaml.Node, field string, parse func(string) (string, error)) []string {
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "permissions: `%s` must be a list of strings, not %s", field, kindOf(n))
		return nil
	}
	var out []string
	for _, e := range n.Content {
		if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" {
			p.errorf(e, "permissions: `%s` entries must be strings, not %s", field, kindOf(e))
			continue
		}
		g, err := parse(e.Value)
		if err != nil {
			p.errorf(e, "permissions: %s: %v", field, err)
			continue
		}
		out = append(out, g)
	}
	return out
}

// filePermissions is the `permissions:` block as Marshal writes it: every
// key, so that a reader sees the whole contract.
type filePermissions struct {
	Read    []yamlString `yaml:"read"`
	Write   []yamlString `yaml:"write"`
	Run     []yamlString `yaml:"run"`
	Network bool         `yaml:"network"`
}

func marshalPermissions(p *safety.Permissions) (*filePermissions, error) {
	if p == nil {
		return nil, nil
	}
	if !p.Read.Limited || !p.Write.Limited || !p.Run.Limited || !p.Network.Limited {
		return nil, fmt.Errorf("marshal plan: permissions: a plan's permissions limit read, write, run and network")
	}
	out := &filePermissions{Read: []yamlString{}, Write: []yamlString{}, Run: []yamlString{}, Network: p.Network.Allowed}
	for _, l := range []struct {
		in    []string
		out   *[]yamlString
		parse func(string) (string, error)
	}{{p.Read.List, &out.Read, safety.ParsePathGlob}, {p.Write.List, &out.Write, safety.ParsePathGlob}, {p.Run.List, &out.Run, safety.ParseProgramGlob}} {
		for _, g := range l.in {
			if _, err := l.parse(g); err != nil {
				return nil, fmt.Errorf("marshal plan: permissions: %w", err)
			}
			*l.out = append(*l.out, yamlString(g))
		}
	}
	return out, nil
}
