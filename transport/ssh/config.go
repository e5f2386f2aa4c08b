package ssh

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ResolveOptions say where Resolve reads ssh_config files from and which
// settings the command line gave. (Dial's settings are in Options.)
type ResolveOptions struct {
	// ConfigFile is ssh's -F: read only this file (no system file). "none"
	// reads no file at all. Empty means ~/.ssh/config, then
	// SystemConfigFile.
	ConfigFile string
	// SystemConfigFile is read after the user's file; empty means
	// /etc/ssh/ssh_config. Relative Includes in it are taken from its
	// directory.
	SystemConfigFile string
	// Home is the local user's home directory, for "~", %d and the default
	// config path; empty means os.UserHomeDir().
	Home string
	// LocalUser is the local user name, for %u, Match localuser and the
	// default User; empty means the current user.
	LocalUser string

	// User, Port and IdentityFiles are command-line overrides (ssh's -l, -p
	// and -i); zero values are unset. As with ssh they win over the
	// destination and the files; IdentityFiles are tried before the
	// configured ones.
	User          string
	Port          int
	IdentityFiles []string
	// Options are ssh_config lines given as ssh's -o options ("Key=Value"
	// or "Key Value"), in command-line order: like the overrides above
	// they come before the files, and the first value obtained wins.
	// Host, Match and Include cannot be given this way, as with ssh.
	Options []string

	// Cache, when set, keeps the config files read (and the local user's
	// name and home) for every Resolve given the same cache: a batch reads
	// and tokenizes ~/.ssh/config once, not once per host, while each
	// destination's Host and Match blocks are still evaluated on its own.
	// Nil reads the files afresh.
	Cache *ConfigCache
}

// ConfigError is a problem in an ssh_config file or in a setting given on
// the command line. Line is 0 when the problem is not on one line.
type ConfigError struct {
	File string
	Line int
	Err  error
}

func (e *ConfigError) Error() string {
	switch {
	case e.File == "":
		return "ssh config: " + e.Err.Error()
	case e.Line == 0:
		return fmt.Sprintf("ssh config %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("ssh config %s:%d: %v", e.File, e.Line, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// defaultIdentities are OpenSSH 9.2's identity files when none is
// configured, as `ssh -G` prints them.
var defaultIdentities = []string{
	"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519",
	"~/.ssh/id_ed25519_sk", "~/.ssh/id_xmss", "~/.ssh/id_dsa",
}

const (
	maxIdentityFiles = 100 // SSH_MAX_IDENTITY_FILES
	maxHostsFiles    = 32  // SSH_MAX_HOSTS_FILES
	maxJumpDepth     = 16  // nested ProxyJump resolutions
)

// Resolve computes the settings for dest ("host", "user@host" or
// "ssh://user@host:port") the way OpenSSH 9.2's ssh does: command-line
// overrides first, then ~/.ssh/config (or ConfigFile) and the system file,
// the first value obtained for each setting winning; Host and Match blocks,
// Include and %-tokens as in ssh_config(5). ProxyJump hops are resolved
// through the same files (each with its own Host blocks, its user and port
// from the hop spec winning) into a flat list, first hop first; the hops'
// own ProxyJump fields are left empty.
//
// Match exec, canonical, final and localnetwork, ProxyCommand and
// CanonicalizeHostname cannot be honoured; when they would apply, Resolve
// fails rather than guess. Keywords agent does not use are not checked.
func Resolve(dest string, opts ResolveOptions) (*HostConfig, error) {
	return resolve(dest, opts, jumpContext{})
}

// jumpContext carries ProxyJump recursion state into resolve.
type jumpContext struct {
	// override is a -J given to the hop's ssh (hops after the first get the
	// hops before them); it replaces the hop's own ProxyJump.
	override     []jumpHop
	overrideSpec string
	hasOverride  bool
	stack        []string // hops being resolved, to catch loops
}

// env is what the local machine contributes: paths, names, tokens.
type env struct {
	home, localUser string
	sysFile         string
	this            string // this machine's host name, for %l, %L and %C
}

func newEnv(opts ResolveOptions) (*env, error) {
	e := &env{home: opts.Home, localUser: opts.LocalUser, sysFile: opts.SystemConfigFile}
	if e.home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("home directory: %w", err)}
		}
		e.home = h
	}
	if e.localUser == "" {
		if u, err := osuser.Current(); err == nil {
			e.localUser = u.Username
		} else if e.localUser = os.Getenv("USER"); e.localUser == "" {
			return nil, &ConfigError{Err: fmt.Errorf("local user name: %w", err)}
		}
	}
	if e.sysFile == "" {
		e.sysFile = "/etc/ssh/ssh_config"
	}
	e.this, _ = os.Hostname()
	return e, nil
}

func resolve(dest string, opts ResolveOptions, jc jumpContext) (*HostConfig, error) {
	e, err := opts.Cache.env(opts)
	if err != nil {
		return nil, err
	}
	duser, host, dport, err := parseDestination(dest)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	st := newSettings(host)
	// The command line comes first, flags before the destination; the first
	// value obtained wins.
	if opts.User != "" {
		st.user, st.userSet = opts.User, true
	}
	if opts.Port != 0 {
		if opts.Port < 0 || opts.Port > 65535 {
			return nil, &ConfigError{Err: fmt.Errorf("bad port %d", opts.Port)}
		}
		st.port = opts.Port
	}
	for _, f := range opts.IdentityFiles {
		p, err := tildeExpand(f, e.home)
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("identity file %q: %w", f, err)}
		}
		st.addIdentity(p, true)
	}
	if duser != "" && !st.userSet {
		st.user, st.userSet = duser, true
	}
	if dport != 0 && st.port == 0 {
		st.port = dport
	}
	if jc.hasOverride {
		st.jump, st.jumpSet = jc.overrideSpec, true
	}
	key := hopKey(st.user, host, st.port)
	r := &reader{st: st, env: e, cache: opts.Cache}
	for _, o := range opts.Options {
		if err := r.option(o); err != nil {
			return nil, &ConfigError{File: "command-line option", Err: fmt.Errorf("-o %q: %w", o, err)}
		}
	}
	if err := r.readConfigs(opts.ConfigFile); err != nil {
		return nil, err
	}
	cfg, err := r.finish()
	if err != nil {
		return nil, err
	}
	if err := resolveJumps(cfg, opts, jc, key); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readConfigs reads the config files in ssh's order.
func (r *reader) readConfigs(configFile string) error {
	if configFile == "none" {
		return nil
	}
	if configFile != "" {
		return r.readTop(configFile, userConf, false)
	}
	if err := r.readTop(filepath.Join(r.env.home, ".ssh", "config"), userConf, true); err != nil {
		return err
	}
	return r.readTop(r.env.sysFile, 0, true)
}

func (r *reader) readTop(path string, flags readFlags, missingOK bool) error {
	lines, err := r.load(path)
	if err != nil {
		if missingOK && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return &ConfigError{File: path, Err: err}
	}
	active := true
	return r.parse(path, lines, flags, &active, 0)
}

// maxConfigSize bounds a config file, so that a stray Include of a device
// cannot exhaust memory.
const maxConfigSize = 4 << 20

// readConfigFile reads a config file; a directory reads as empty, as it
// does for ssh.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigSize)
	}
	return data, nil
}

// finish applies ssh's defaults and expansions to the obtained settings.
func (r *reader) finish() (*HostConfig, error) {
	st, e := r.st, r.env
	cfg := &HostConfig{
		Alias:                 st.alias,
		User:                  e.localUser,
		Port:                  22,
		ServerAliveCountMax:   3,
		StrictHostKeyChecking: "ask",
		IdentitiesOnly:        st.identitiesOnly == 1,
		HashKnownHosts:        st.hashKnownHosts == 1,
		ConnectTimeoutSet:     st.connectTimeout >= 0,
	}
	if st.userSet {
		cfg.User = st.user
	}
	if st.port != 0 {
		cfg.Port = st.port
	}
	hostName, err := st.matchHost()
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("HostName %q: %w", st.hostName, err)}
	}
	cfg.HostName = asciiLower(hostName)
	if st.connectTimeout > 0 {
		cfg.ConnectTimeout = time.Duration(st.connectTimeout) * time.Second
	}
	if st.aliveInterval > 0 {
		cfg.ServerAliveInterval = time.Duration(st.aliveInterval) * time.Second
	}
	if st.aliveCountMax >= 0 {
		cfg.ServerAliveCountMax = st.aliveCountMax
	}
	if st.strict != "" {
		cfg.StrictHostKeyChecking = st.strict
	}
	if st.canonicalize == "yes" || st.canonicalize == "always" {
		return nil, &ConfigError{Err: errors.New("CanonicalizeHostname is not supported by agent")}
	}
	if st.proxyCommandSet && st.proxyCommand != "none" {
		cfg.ProxyCommand = st.proxyCommand
	}
	tok := e.tokens(cfg)
	ids := st.identities
	if len(ids) == 0 {
		for _, d := range defaultIdentities {
			ids = append(ids, identity{spec: d})
		}
	}
	for _, id := range ids {
		cfg.IdentityFileSpecs = append(cfg.IdentityFileSpecs, id.spec)
		if strings.EqualFold(id.spec, "none") {
			continue
		}
		p, err := expandPath(id.spec, e.home, tok)
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("IdentityFile %q: %w", id.spec, err)}
		}
		cfg.IdentityFiles = append(cfg.IdentityFiles, p)
	}
	if cfg.UserKnownHostsFiles, err = expandHostsFiles(st.userKnownHosts, st.userKnownHostsSet,
		[]string{"~/.ssh/known_hosts", "~/.ssh/known_hosts2"}, e.home, tok); err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("UserKnownHostsFile: %w", err)}
	}
	if cfg.GlobalKnownHostsFiles, err = expandHostsFiles(st.globalKnownHosts, st.globalKnownHostsSet,
		[]string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}, e.home, tok); err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("GlobalKnownHostsFile: %w", err)}
	}
	if st.identityAgentSet {
		switch st.identityAgent {
		case "SSH_AUTH_SOCK":
		case "none":
			cfg.IdentityAgent = "none"
		default:
			if cfg.IdentityAgent, err = expandPath(st.identityAgent, e.home, tok); err != nil {
				return nil, &ConfigError{Err: fmt.Errorf("IdentityAgent %q: %w", st.identityAgent, err)}
			}
		}
	}
	if st.jumpSet && !strings.EqualFold(st.jump, "none") {
		cfg.ProxyJumpSpec = st.jump
	}
	cfg.ControlMaster = st.controlMaster
	if st.controlPathSet && !strings.EqualFold(st.controlPath, "none") {
		if cfg.ControlPath, err = expandPath(st.controlPath, e.home, tok); err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("ControlPath %q: %w", st.controlPath, err)}
		}
	}
	return cfg, nil
}

// expandHostsFiles turns a known_hosts file list into paths: defaults when
// unset, none for "none".
func expandHostsFiles(files []string, set bool, defaults []string, home string, tok map[byte]string) ([]string, error) {
	if !set {
		files = defaults
	}
	if len(files) == 1 && strings.EqualFold(files[0], "none") {
		return nil, nil
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		p, err := expandPath(f, home, tok)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// parseDestination splits ssh's destination argument: [user@]host or
// ssh://[user@]host[:port]. A "host:port" form is not ssh's: the whole
// string is then the host, as with ssh.
func parseDestination(dest string) (user, host string, port int, err error) {
	if user, host, port, isURI, err := parseSSHURI(dest); isURI {
		if err != nil {
			return "", "", 0, fmt.Errorf("destination %q: %w", dest, err)
		}
		return user, host, port, nil
	}
	host = dest
	if i := strings.LastIndexByte(dest, '@'); i >= 0 {
		if i == 0 {
			return "", "", 0, fmt.Errorf("destination %q: empty user name", dest)
		}
		user, host = dest[:i], dest[i+1:]
	}
	if host == "" {
		return "", "", 0, fmt.Errorf("destination %q: empty host name", dest)
	}
	return user, host, 0, nil
}

// tokens are the %-tokens of IdentityFile, UserKnownHostsFile and
// IdentityAgent (ssh_config(5) TOKENS) for cfg.
func (e *env) tokens(cfg *HostConfig) map[byte]string {
	this := e.this
	short, _, _ := strings.Cut(this, ".")
	port := strconv.Itoa(cfg.Port)
	return map[byte]string{
		'C': connectionHash(this, cfg.HostName, port, cfg.User),
		'd': e.home, 'h': cfg.HostName, 'i': strconv.Itoa(os.Getuid()),
		'k': cfg.Alias, 'L': short, 'l': this, 'n': cfg.Alias,
		'p': port, 'r': cfg.User, 'u': e.localUser,
	}
}
