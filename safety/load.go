package safety

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// policyFile is the YAML form of a Policy: every field optional. Maps merge
// key by key over the defaults (nested maps too); lists and scalars that
// are present replace the default.
type policyFile struct {
	Commands         map[string]Rule            `yaml:"commands"`
	Subcommands      map[string]map[string]Rule `yaml:"subcommands"`
	Flags            map[string]map[string]Rule `yaml:"flags"`
	QueryFlags       map[string][]string        `yaml:"query_flags"`
	ValueOptions     map[string][]string        `yaml:"value_options"`
	WriteOptions     map[string][]string        `yaml:"write_options"`
	WriteOperands    map[string]string          `yaml:"write_operands"`
	ReadOptions      map[string][]string        `yaml:"read_options"`
	RecursiveReaders map[string][]string        `yaml:"recursive_readers"`
	ReadOnly         map[string]string          `yaml:"read_only"`
	AnyOptions       *[]string                  `yaml:"any_options"`
	PatternCommands  *[]string                  `yaml:"pattern_commands"`
	DataOnly         *[]string                  `yaml:"data_only"`
	MetadataOnly     *[]string                  `yaml:"metadata_only"`
	Wrappers         map[string]Wrapper         `yaml:"wrappers"`
	Shells           *[]string                  `yaml:"shells"`
	Interpreters     map[string][]string        `yaml:"interpreters"`
	BinDirs          *[]string                  `yaml:"bin_dirs"`
	DangerousEnv     *[]string                  `yaml:"dangerous_env"`
	HarmlessEnv      *[]string                  `yaml:"harmless_env"`
	SystemRoots      *[]string                  `yaml:"system_roots"`
	HarmlessDevices  *[]string                  `yaml:"harmless_devices"`
	SensitivePaths   *[]string                  `yaml:"sensitive_paths"`
	PublicPaths      *[]string                  `yaml:"public_paths"`
	ProtectedPaths   *[]string                  `yaml:"protected_paths"`
	AutorunPaths     *[]string                  `yaml:"autorun_paths"`
	ReadableDotfiles *baseNames                 `yaml:"readable_dotfiles"`
	SecretNames      *baseNames                 `yaml:"secret_names"`
	MaxReadBytes     *byteSize                  `yaml:"max_read_bytes"`
	MaxWriteBytes    *byteSize                  `yaml:"max_write_bytes"`
	RefuseBinary     *bool                      `yaml:"refuse_binary"`
	RequireEnforce   *bool                      `yaml:"require_enforcement"`
	KeepLauncher     *bool                      `yaml:"keep_launcher"`
	Ephemeral        *bool                      `yaml:"ephemeral_launcher"`
	Sandbox          *sandboxFile               `yaml:"sandbox"`
	PassEnv          *passEnvList               `yaml:"pass_env"`
}

// sandboxFile is the sandbox: section; its allow_write joins the policy's
// one write list (AllowWrite), checked as --allow-write is.
type sandboxFile struct {
	Sandbox
	AllowWrite []string
}

// LoadPolicy reads a YAML policy and merges it over DefaultPolicy. Unknown
// keys and bad values are errors that name their line. An empty document
// gives the defaults.
func LoadPolicy(r io.Reader) (Policy, error) {
	var f policyFile
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return DefaultPolicy(), nil
		}
		return Policy{}, fmt.Errorf("load safety policy: %w", err)
	}
	if err := f.check(); err != nil {
		return Policy{}, fmt.Errorf("load safety policy: %w", err)
	}
	return f.over(DefaultPolicy()), nil
}

// check refuses settings that contradict each other.
func (f policyFile) check() error {
	if f.KeepLauncher != nil && f.Ephemeral != nil && *f.KeepLauncher == *f.Ephemeral {
		return fmt.Errorf("keep_launcher: %v and ephemeral_launcher: %v disagree; set ephemeral_launcher alone", *f.KeepLauncher, *f.Ephemeral)
	}
	return nil
}

// LoadConfigPolicy reads agent's config file (config.yaml) and merges its
// "safety:" section, a policy as LoadPolicy reads it, over DefaultPolicy.
// Errors name their line in the config file. The file's other top-level
// sections belong to other packages and are returned by name, undecoded, for
// their owners to check.
func LoadConfigPolicy(r io.Reader) (Policy, map[string]yaml.Node, error) {
	var f struct {
		Safety *policyFile          `yaml:"safety"`
		Other  map[string]yaml.Node `yaml:",inline"`
	}
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return DefaultPolicy(), nil, nil
		}
		return Policy{}, nil, fmt.Errorf("load safety policy: %w", err)
	}
	p := DefaultPolicy()
	if f.Safety != nil {
		if err := f.Safety.check(); err != nil {
			return Policy{}, nil, fmt.Errorf("load safety policy: safety: %w", err)
		}
		p = f.Safety.over(p)
	}
	return p, f.Other, nil
}

// over merges f over p and returns p.
func (f policyFile) over(p Policy) Policy {
	merge(p.Commands, f.Commands)
	// A command the file itself rates safe, without a read_only list, is
	// the operator's word: its options are not checked.
	for name, r := range f.Commands {
		if _, listed := f.ReadOnly[name]; r.Level == Safe && !listed {
			p.AnyOptions = append(p.AnyOptions, name)
		}
	}
	mergeNested(p.Subcommands, f.Subcommands)
	mergeNested(p.Flags, f.Flags)
	merge(p.QueryFlags, f.QueryFlags)
	merge(p.ValueOptions, f.ValueOptions)
	merge(p.WriteOptions, f.WriteOptions)
	merge(p.WriteOperands, f.WriteOperands)
	merge(p.ReadOptions, f.ReadOptions)
	merge(p.RecursiveReaders, f.RecursiveReaders)
	merge(p.Wrappers, f.Wrappers)
	merge(p.Interpreters, f.Interpreters)
	merge(p.ReadOnly, f.ReadOnly)
	for _, l := range []struct {
		dst *[]string
		src *[]string
	}{
		{&p.PatternCommands, f.PatternCommands}, {&p.AnyOptions, f.AnyOptions}, {&p.DataOnly, f.DataOnly}, {&p.MetadataOnly, f.MetadataOnly},
		{&p.Shells, f.Shells}, {&p.BinDirs, f.BinDirs}, {&p.DangerousEnv, f.DangerousEnv}, {&p.HarmlessEnv, f.HarmlessEnv},
		{&p.SystemRoots, f.SystemRoots}, {&p.HarmlessDevices, f.HarmlessDevices},
		{&p.SensitivePaths, f.SensitivePaths}, {&p.PublicPaths, f.PublicPaths}, {&p.ProtectedPaths, f.ProtectedPaths},
		{&p.AutorunPaths, f.AutorunPaths},
	} {
		if l.src != nil {
			*l.dst = *l.src
		}
	}
	if f.MaxReadBytes != nil {
		p.MaxReadBytes = int64(*f.MaxReadBytes)
	}
	if f.MaxWriteBytes != nil {
		p.MaxWriteBytes = int64(*f.MaxWriteBytes)
	}
	if f.RefuseBinary != nil {
		p.RefuseBinary = *f.RefuseBinary
	}
	if f.RequireEnforce != nil {
		p.RequireEnforcement = *f.RequireEnforce
	}
	// keep_launcher is the older spelling: true is the default now, false
	// is ephemeral_launcher: true (check refuses both, disagreeing).
	if f.KeepLauncher != nil {
		p.EphemeralLauncher = !*f.KeepLauncher
	}
	if f.Ephemeral != nil {
		p.EphemeralLauncher = *f.Ephemeral
	}
	if f.ReadableDotfiles != nil {
		p.ReadableDotfiles = *f.ReadableDotfiles
	}
	if f.SecretNames != nil {
		p.SecretNames = *f.SecretNames
	}
	if f.PassEnv != nil {
		p.PassEnv = *f.PassEnv
	}
	if f.Sandbox != nil {
		p.Sandbox = f.Sandbox.Sandbox
		p.AllowWrite = append(p.AllowWrite, f.Sandbox.AllowWrite...)
	}
	return p
}

func merge[V any](dst, src map[string]V) {
	for k, v := range src {
		dst[k] = v
	}
}

func mergeNested(dst, src map[string]map[string]Rule) {
	for k, m := range src {
		if dst[k] == nil {
			dst[k] = map[string]Rule{}
		}
		merge(dst[k], m)
	}
}

// UnmarshalYAML accepts a bare level ("high") or {level: high, reason: …}.
func (r *Rule) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		l, err := ParseLevel(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		*r = Rule{Level: l}
		return nil
	case yaml.MappingNode:
		var out Rule
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "level":
				l, err := ParseLevel(v.Value)
				if err != nil {
					return fmt.Errorf("line %d: %w", v.Line, err)
				}
				out.Level = l
			case "reason":
				out.Reason = v.Value
			default:
				return fmt.Errorf("line %d: unknown rule key %q (want level, reason)", k.Line, k.Value)
			}
		}
		*r = out
		return nil
	}
	return fmt.Errorf("line %d: a rule is a level or {level, reason}", n.Line)
}

// UnmarshalYAML gives bad levels their line number.
func (l *Level) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseLevel(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*l = v
	return nil
}

// byteSize is a size in YAML: a number of bytes or "512KB", "10MB", "1GB"
// (powers of 1024).
type byteSize int64

func (b *byteSize) UnmarshalYAML(n *yaml.Node) error {
	s := strings.ToUpper(strings.TrimSpace(n.Value))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return fmt.Errorf("line %d: bad size %q (want bytes or a number with KB, MB, GB)", n.Line, n.Value)
	}
	*b = byteSize(v * mult)
	return nil
}

// UnmarshalYAML decodes a sandbox: section, refusing an unknown mode or
// a bad allow_write path with its line.
func (s *sandboxFile) UnmarshalYAML(n *yaml.Node) error {
	var v struct {
		Mode       string   `yaml:"mode"`
		AllowWrite []string `yaml:"allow_write"`
		AllowNet   bool     `yaml:"allow_net"`
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: sandbox must be a mapping (mode, allow_write, allow_net)", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "mode" && k != "allow_write" && k != "allow_net" {
			return fmt.Errorf("line %d: unknown key %q in sandbox (known: mode, allow_write, allow_net)", n.Content[i].Line, k)
		}
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	if err := CheckSandboxMode(v.Mode); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = sandboxFile{Sandbox: Sandbox{Mode: v.Mode, AllowNet: v.AllowNet}}
	for _, w := range v.AllowWrite {
		g, err := ParseWritePath(w)
		if err != nil {
			return fmt.Errorf("line %d: sandbox: allow_write: %w", n.Line, err)
		}
		s.AllowWrite = append(s.AllowWrite, g)
	}
	return nil
}
