package safety

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Rule is the level a command, subcommand or flag carries and why.
// In YAML it is either a bare level ("high") or {level: high, reason: "…"}.
type Rule struct {
	Level  Level  `yaml:"level"`
	Reason string `yaml:"reason,omitempty"`
	// Undoable: the rule's level is High only because the change cannot
	// be taken back (rm -r, chmod -R). When the executor's undo journal
	// saves everything the command changes before it runs, the rule
	// counts as Medium (Analysis.IfJournaled); a policy that leaves it
	// out keeps its level whatever is journaled.
	Undoable bool `yaml:"undoable,omitempty"`
}

// Wrapper describes a command that runs another command given as its
// arguments (sudo, env, nohup, timeout, xargs, …); the wrapped command is
// classified too.
type Wrapper struct {
	// ValueOptions take the next word as their value.
	ValueOptions []string `yaml:"value_options,omitempty"`
	// CodeOptions take shell code as their value, wherever they appear
	// (su -c, env -S, flock -c); it is parsed and classified.
	CodeOptions []string `yaml:"code_options,omitempty"`
	// Skip is the number of operands before the wrapped command
	// (timeout DURATION, chroot DIR).
	Skip int `yaml:"skip,omitempty"`
	// Assignments: NAME=VALUE words before the command set its environment.
	Assignments bool `yaml:"assignments,omitempty"`
	// NoCommand: operands are not a command (su USER); only CodeOptions run code.
	NoCommand bool `yaml:"no_command,omitempty"`
	// JoinCode: the remaining words are joined and run by a shell (watch).
	JoinCode bool `yaml:"join_code,omitempty"`
	// InputOperands: the wrapped command gets more operands from standard
	// input (xargs), which cannot be checked.
	InputOperands bool `yaml:"input_operands,omitempty"`
}

// Policy holds every list the safety layer decides by. DefaultPolicy returns
// the built-in one; LoadPolicy merges a YAML file over it. A Policy is read
// only once in use and safe for concurrent classification.
//
// Keys of Commands, Flags, Subcommands and the other per-command maps are
// command names; Flags and ValueOptions also accept "name sub" keys for a
// subcommand ("git reset"). Commands keys may be glob patterns ("mkfs.*").
type Policy struct {
	// undoView: Undoable rules count as Medium (see Analysis.IfJournaled).
	undoView bool
	// AllowWrite (--allow-write, the config's limits.allow_write and
	// safety.sandbox.allow_write: one list) limits where steps may write:
	// path globs (ParseWritePath), absolute or "~/…"; "DIR/**" is DIR's
	// whole tree. Empty: no limit beyond the levels. Under the sandbox it
	// is what the kernel lets every command write beside the working and
	// temp directories.
	AllowWrite []string `yaml:"-"`
	// OnlySafe (--read-only, limits: read_only) runs only safe steps and
	// no file tool that writes, whatever the approval mode.
	OnlySafe bool `yaml:"-"`
	// Commands gives a command's level before its arguments are looked at.
	// A command found nowhere in the policy is High: what an unknown
	// program does cannot be known (a program file given by path is Medium).
	Commands map[string]Rule `yaml:"commands"`
	// Subcommands gives the level of a command's first operand
	// ("systemctl stop"); the command's own rule is a floor. "*" matches
	// any operand, "" no operand; the key then becomes "name op" (or
	// "name *") for the next level.
	Subcommands map[string]map[string]Rule `yaml:"subcommands"`
	// Flags raise the level when an option is present. "-r" also matches
	// inside "-rf"; "-s KILL" matches an option and its value.
	Flags map[string]map[string]Rule `yaml:"flags"`
	// QueryFlags turn a command into a read-only query (crontab -l): its
	// own rule becomes Safe; Flags still apply.
	QueryFlags map[string][]string `yaml:"query_flags"`
	// ValueOptions take the next word as their value, which is then not an
	// operand or subcommand.
	ValueOptions map[string][]string `yaml:"value_options"`
	// WriteOptions name a file the command writes (sort -o FILE).
	WriteOptions map[string][]string `yaml:"write_options"`
	// ReadOptions name a file the command reads or sends (curl -T FILE);
	// sensitive files are High.
	ReadOptions map[string][]string `yaml:"read_options"`
	// RecursiveReaders read whole directory trees: the options that make
	// them recursive, or an empty list when they always are. A directory
	// holding sensitive files is then High.
	RecursiveReaders map[string][]string `yaml:"recursive_readers"`
	// WriteOperands: which operands are written, created or deleted:
	// "all", "last" or "second".
	WriteOperands map[string]string `yaml:"write_operands"`
	// ReadOnly is the allow-list of a command rated Safe: per command key
	// ("ls", "git log"), the options known to be read-only (see optSpec for
	// the syntax). On a Safe command any other option, a short-option
	// cluster the list cannot split, or an operand beyond "ops=N" is at
	// least Medium; values naming files are checked as reads or writes.
	ReadOnly map[string]string `yaml:"read_only"`
	// AnyOptions are Safe commands none of whose options writes, runs or
	// reads a file (echo, true, uname): their options are not checked.
	AnyOptions []string `yaml:"any_options"`
	// PatternCommands take a pattern or program as first operand (grep, awk).
	PatternCommands []string `yaml:"pattern_commands"`
	// DataOnly commands cannot do harm or leak files whatever their
	// arguments: computed (non-literal) arguments are accepted.
	DataOnly []string `yaml:"data_only"`
	// MetadataOnly commands look at names, not contents: operands are not
	// checked as sensitive reads (find).
	MetadataOnly []string `yaml:"metadata_only"`
	// Wrappers run the command in their arguments.
	Wrappers map[string]Wrapper `yaml:"wrappers"`
	// Shells run -c code (parsed and classified), a script file (Medium) or
	// code from standard input (High unless a literal here-document).
	Shells []string `yaml:"shells"`
	// Interpreters maps a language runtime to its inline-code options
	// (python: -c). Inline code is High, a script file Medium.
	Interpreters map[string][]string `yaml:"interpreters"`
	// BinDirs are directories whose programs count as their base name
	// (/usr/bin/rm is rm); any other path runs a program file.
	BinDirs []string `yaml:"bin_dirs"`
	// DangerousEnv lists variables (glob patterns) whose assignment changes
	// how later commands are found or run (PATH, LD_PRELOAD).
	DangerousEnv []string `yaml:"dangerous_env"`
	// HarmlessEnv lists variables (glob patterns) a command may be given
	// unasked (LANG, TZ, COLUMNS); any other, exported or set before a
	// command, is at least Medium.
	HarmlessEnv []string `yaml:"harmless_env"`
	// SystemRoots: writing, deleting or changing anything under them is High.
	SystemRoots []string `yaml:"system_roots"`
	// HarmlessDevices may be written freely (/dev/null).
	HarmlessDevices []string `yaml:"harmless_devices"`
	// SensitivePaths are glob patterns whose reading is High: secrets such
	// as /etc/shadow and private keys. "~/" is the home directory; a
	// pattern without "/" matches the base name.
	SensitivePaths []string `yaml:"sensitive_paths"`
	// PublicPaths are exceptions to SensitivePaths: files in a sensitive
	// place that are meant to be read (~/.ssh/known_hosts, *.pub).
	PublicPaths []string `yaml:"public_paths"`
	// ProtectedPaths are, besides SystemRoots, patterns whose writing is High
	// (~/.ssh/authorized_keys, shell start-up files).
	ProtectedPaths []string `yaml:"protected_paths"`
	// AutorunPaths are, besides ProtectedPaths, the places whose contents
	// run later without being run by name (user site-packages, editor
	// plugins, crontabs, systemd user units): writing there is High
	// (autorun.go).
	AutorunPaths []string `yaml:"autorun_paths"`
	// ReadableDotfiles are the dot-files and dot-directories of ~ (base
	// names) an unapproved step may read; the kernel denies it every
	// other one (secrets.go).
	ReadableDotfiles []string `yaml:"readable_dotfiles"`
	// SecretNames are base-name patterns of secrets the kernel denies
	// unapproved steps wherever a bounded walk of ~ and the working
	// directory finds them (id_*, *.pem, .env, .npmrc, histories).
	SecretNames []string `yaml:"secret_names"`
	// MaxReadBytes caps read_file; MaxWriteBytes caps write_file/edit_file.
	MaxReadBytes  int64 `yaml:"max_read_bytes"`
	MaxWriteBytes int64 `yaml:"max_write_bytes"`
	// RefuseBinary refuses writing or editing a file whose content is binary.
	RefuseBinary bool `yaml:"refuse_binary"`
	// RequireEnforcement refuses to run a step nobody approved on a host
	// whose kernel cannot confine it (no Landlock, not Linux): the
	// classifier alone is not trusted there (--require-enforcement).
	RequireEnforcement bool `yaml:"require_enforcement"`
	// EphemeralLauncher sends the kernel's launcher and computes its rules
	// on SSH hosts for each session, and removes them at its end
	// (--ephemeral; config ephemeral_launcher, or keep_launcher: false).
	// By default they are kept between sessions in agent's state directory
	// there, where no unapproved step may write: one launcher a build of
	// agent on each host.
	EphemeralLauncher bool `yaml:"ephemeral_launcher"`
	// Sandbox is the operator's own confinement of every command
	// (--sandbox): off when its Mode is "".
	Sandbox Sandbox `yaml:"sandbox"`
	// PassEnv names variables of agent's environment that local steps
	// get besides transport.StepEnvAllowed (safety: pass_env); a
	// secret-named one is refused when the file is read.
	PassEnv []string `yaml:"pass_env"`
}

// Sandbox modes (--sandbox=MODE).
const (
	SandboxOn         = "on"          // writes only under the allowed paths, reads everywhere
	SandboxStrict     = "strict"      // reads limited too: the system's directories and the allowed paths
	SandboxBestEffort = "best-effort" // as on, but a host without Landlock runs unconfined, with a warning
)

// Sandbox confines every command, approved ones included, with Linux
// Landlock: writes only under the working directory, the system temp
// directory and the policy's AllowWrite (--allow-write: one list for the
// sandbox and the write limit); TCP connect and bind only with AllowNet.
// The file tools obey the same rules.
type Sandbox struct {
	Mode     string `yaml:"mode"`
	AllowNet bool   `yaml:"allow_net"`
}

// On reports whether the sandbox applies.
func (s Sandbox) On() bool { return s.Mode != "" && s.Mode != "off" }

// CheckSandboxMode refuses a mode that is not one of off, on, strict,
// best-effort.
func CheckSandboxMode(m string) error {
	switch m {
	case "", "off", SandboxOn, SandboxStrict, SandboxBestEffort:
		return nil
	}
	return fmt.Errorf("sandbox mode %q: want on, strict, best-effort or off", m)
}

// commandRule finds a command's own rule: exact name first, then glob keys.
func (p *Policy) commandRule(name string) (Rule, bool) {
	if r, ok := p.Commands[name]; ok {
		return r, true
	}
	for k, r := range p.Commands {
		if strings.ContainsAny(k, "*?[") {
			if ok, _ := path.Match(k, name); ok {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// known reports whether the policy says anything about a command name.
func (p *Policy) known(name string) bool {
	if _, ok := p.commandRule(name); ok {
		return true
	}
	if _, ok := p.Wrappers[name]; ok {
		return true
	}
	_, interp := p.interpreter(name)
	return interp || slices.Contains(p.Shells, name)
}

// interpreter returns the inline-code options of a language runtime;
// "python3.12" finds "python3" or "python".
func (p *Policy) interpreter(name string) ([]string, bool) {
	for n := name; n != ""; {
		if opts, ok := p.Interpreters[n]; ok {
			return opts, true
		}
		trimmed := strings.TrimRight(n, "0123456789.")
		if trimmed == n {
			break
		}
		n = trimmed
	}
	return nil, false
}

func (p *Policy) dataOnly(name string) bool { return slices.Contains(p.DataOnly, name) }

// envRisk is the level of setting an environment variable for a command:
// High for DangerousEnv, Safe for HarmlessEnv, Medium for any other (what
// a program does with a variable it reads cannot be known: GIT_TRACE=FILE
// writes FILE, GIT_CONFIG_* runs commands).
func (p *Policy) envRisk(name string) Level {
	if p.dangerousEnv(name) {
		return High
	}
	for _, pat := range p.HarmlessEnv {
		if ok, _ := path.Match(pat, name); ok {
			return Safe
		}
	}
	return Medium
}

func (p *Policy) dangerousEnv(name string) bool {
	for _, pat := range p.DangerousEnv {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}
