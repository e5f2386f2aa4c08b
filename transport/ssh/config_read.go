package ssh

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	osuser "os/user"
	"path/filepath"
	"sort"
	"strings"
)

// This file reads ssh_config files line by line the way OpenSSH 9.2's
// readconf.c does. kevinburke/ssh_config (v1.6.0) is not used: its parser
// differs from ssh on inputs found in real configs ('?' matching no
// character, tabs between Host patterns, '#' inside a word, quoted words,
// comma lists in Match, Match host compared with the alias instead of
// HostName, Match user refused), and it reads Includes itself while
// parsing, from the passwd home directory and at most 5 levels deep.

// maxIncludeDepth is OpenSSH's READCONF_MAX_DEPTH.
const maxIncludeDepth = 16

type readFlags uint8

const (
	// userConf marks a user config (~/.ssh/config, -F and what they
	// include): relative Includes are under ~/.ssh and "~" is allowed.
	userConf readFlags = 1 << iota
	// neverMatch marks a file included from an inactive block: it is
	// checked but none of its lines apply.
	neverMatch
)

// settings are the values obtained so far; the first one obtained wins.
type settings struct {
	alias string // the host as given; Host patterns match it

	hostName, user, identityAgent, jump, proxyCommand string
	hostNameSet, userSet, identityAgentSet, jumpSet   bool
	proxyCommandSet                                   bool
	controlPath, controlMaster                        string
	controlPathSet                                    bool

	port                         int // 0: unset
	identities                   []identity
	identitiesOnly               int // -1: unset
	hashKnownHosts               int // -1: unset
	connectTimeout               int // seconds, -1: unset
	aliveInterval, aliveCountMax int // -1: unset
	strict, canonicalize         string

	userKnownHosts, globalKnownHosts       []string
	userKnownHostsSet, globalKnownHostsSet bool
}

type identity struct {
	spec         string
	userProvided bool // from the command line or a user config
}

func newSettings(alias string) *settings {
	return &settings{alias: alias, identitiesOnly: -1, hashKnownHosts: -1, connectTimeout: -1, aliveInterval: -1, aliveCountMax: -1}
}

// addIdentity adds an identity file unless it is already listed (ssh's
// add_identity_file).
func (st *settings) addIdentity(spec string, userProvided bool) {
	for _, id := range st.identities {
		if id.spec == spec && id.userProvided == userProvided {
			return
		}
	}
	st.identities = append(st.identities, identity{spec, userProvided})
}

// matchHost is the host name as configured so far (HostName with %h
// expanded, or the alias): what Match host is compared with.
func (st *settings) matchHost() (string, error) {
	if !st.hostNameSet {
		return st.alias, nil
	}
	return percentExpand(st.hostName, map[byte]string{'h': st.alias})
}

// reader evaluates config files for one destination.
type reader struct {
	st    *settings
	env   *env
	cache *ConfigCache // nil: files are read afresh
}

// parse evaluates one file's lines; active is the Host/Match state, shared
// with the including file.
func (r *reader) parse(file string, lines []configLine, flags readFlags, active *bool, depth int) error {
	for n := range lines {
		if err := r.eval(&lines[n], flags, active, depth); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				return err
			}
			return &ConfigError{File: file, Line: n + 1, Err: err}
		}
	}
	return nil
}

// configLine is one line of a config file split into its keyword and
// arguments (what does not depend on the destination), so that a file read
// once can be evaluated for many (ConfigCache). It is never modified after
// tokenize.
type configLine struct {
	kw   string   // lower case; "" for a blank line or a comment
	rest string   // the text after the keyword, as written
	args []string // rest split like argv
	err  error    // a syntax error, reported whatever the Host/Match state
}

// splitLines tokenizes a file's lines.
func splitLines(data []byte) []configLine {
	raw := strings.Split(string(data), "\n")
	lines := make([]configLine, len(raw))
	for i, l := range raw {
		lines[i] = tokenize(l)
	}
	return lines
}

// tokenize splits one line as OpenSSH's process_config_line_depth does
// before it looks at the keyword.
func tokenize(line string) configLine {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i] // C strings end at NUL
	}
	line = strings.TrimRight(line, whitespace+"\f")
	kw, rest, more, ok := strdelim(line)
	if ok && kw == "" {
		if !more {
			return configLine{}
		}
		kw, rest, more, ok = strdelim(rest)
	}
	if !ok || kw == "" || kw[0] == '#' {
		return configLine{}
	}
	kw = asciiLower(kw)
	rest = strings.TrimLeft(rest, whitespace)
	if !more || rest == "" {
		return configLine{kw: kw, err: fmt.Errorf("no argument after keyword %q", kw)}
	}
	args, ok := argvSplit(rest)
	if !ok {
		return configLine{kw: kw, err: errors.New("invalid quotes")}
	}
	return configLine{kw: kw, rest: rest, args: args}
}

// eval evaluates one tokenized line for this reader's destination.
func (r *reader) eval(l *configLine, flags readFlags, active *bool, depth int) error {
	if l.err != nil {
		return l.err
	}
	kw, rest, args := l.kw, l.rest, l.args
	if kw == "" {
		return nil
	}
	st, on := r.st, *active
	switch kw {
	case "host":
		*active = false
		for _, a := range args {
			if a == "" {
				return errors.New("keyword host: empty argument")
			}
			if flags&neverMatch != 0 {
				break
			}
			neg := a[0] == '!'
			if neg {
				a = a[1:]
			}
			if matchPattern(st.alias, a) {
				if neg {
					*active = false
					break
				}
				*active = true
			}
		}
	case "match":
		v, err := r.match(args, flags)
		if err != nil {
			return fmt.Errorf("Match: %w", err)
		}
		*active = v && flags&neverMatch == 0
	case "include":
		return r.include(args, flags, active, depth)
	case "hostname":
		return setString(args, kw, on, &st.hostName, &st.hostNameSet)
	case "user":
		return setString(args, kw, on, &st.user, &st.userSet)
	case "identityagent":
		return setString(args, kw, on, &st.identityAgent, &st.identityAgentSet)
	case "port":
		v, err := oneArg(args, kw)
		if err != nil {
			return err
		}
		p := a2port(v)
		if p <= 0 {
			return fmt.Errorf("bad port %q", v)
		}
		if on && st.port == 0 {
			st.port = p
		}
	case "identityfile":
		v, err := oneArg(args, kw)
		if err != nil || !on {
			return err
		}
		if len(st.identities) >= maxIdentityFiles {
			return fmt.Errorf("too many identity files specified (max %d)", maxIdentityFiles)
		}
		st.addIdentity(v, flags&userConf != 0)
	case "identitiesonly":
		return setChoice(args, kw, on, &st.identitiesOnly, flagChoices)
	case "hashknownhosts":
		return setChoice(args, kw, on, &st.hashKnownHosts, flagChoices)
	case "stricthostkeychecking":
		return setWord(args, kw, on, &st.strict, strictChoices)
	case "canonicalizehostname":
		return setWord(args, kw, on, &st.canonicalize, canonicalizeChoices)
	case "connecttimeout":
		return setTime(args, kw, on, &st.connectTimeout)
	case "serveraliveinterval":
		return setTime(args, kw, on, &st.aliveInterval)
	case "serveralivecountmax":
		v, err := oneArg(args, kw)
		if err != nil {
			return err
		}
		c, err := atoiErr(v)
		if err != nil {
			return fmt.Errorf("%s: integer value %w", kw, err)
		}
		if on && st.aliveCountMax < 0 {
			st.aliveCountMax = c
		}
	case "userknownhostsfile":
		return setFiles(args, kw, on, &st.userKnownHosts, &st.userKnownHostsSet)
	case "globalknownhostsfile":
		return setFiles(args, kw, on, &st.globalKnownHosts, &st.globalKnownHostsSet)
	case "proxyjump":
		// ssh parses the raw text here, up to a blank or '#'.
		spec := rest
		if i := strings.IndexAny(spec, whitespace+"#"); i >= 0 {
			spec = spec[:i]
		}
		if _, err := parseJumpSpec(spec); err != nil {
			return fmt.Errorf("invalid ProxyJump %q: %w", rest, err)
		}
		if on && !st.jumpSet && !st.proxyCommandSet {
			st.jump, st.jumpSet = spec, true
		}
	case "controlpath":
		return setString(args, kw, on, &st.controlPath, &st.controlPathSet)
	case "controlmaster":
		return setWord(args, kw, on, &st.controlMaster, controlMasterChoices)
	case "proxycommand":
		if on && !st.jumpSet && !st.proxyCommandSet {
			st.proxyCommand, st.proxyCommandSet = rest, true
		}
	}
	return nil
}

// option evaluates one -o option as ssh does (process_config_line with
// the file "command-line"): a user-config line that may not open a block.
func (r *reader) option(o string) error {
	kw, _, _, _ := strdelim(strings.TrimLeft(o, whitespace))
	switch asciiLower(kw) {
	case "host", "match", "include":
		return fmt.Errorf("%s directive not supported as a command-line option", kw)
	}
	if strings.ContainsAny(o, "\n\r") {
		return errors.New("a line break inside an option")
	}
	active := true
	l := tokenize(o)
	return r.eval(&l, userConf, &active, 0)
}

// Keywords are the ssh_config keywords (lower case) whose values agent
// acts on; others are read, checked where ssh would refuse them, and
// otherwise have no effect.
var Keywords = map[string]bool{
	"hostname": true, "user": true, "port": true, "identityfile": true, "identitiesonly": true,
	"identityagent": true, "stricthostkeychecking": true, "connecttimeout": true,
	"serveraliveinterval": true, "serveralivecountmax": true, "userknownhostsfile": true,
	"globalknownhostsfile": true, "proxyjump": true, "proxycommand": true, "hashknownhosts": true,
	"controlpath": true, "controlmaster": true,
}

// include evaluates an Include line: each argument is a glob, relative to
// ~/.ssh (user config) or the system config's directory.
func (r *reader) include(args []string, flags readFlags, active *bool, depth int) error {
	for _, a := range args {
		pattern, err := r.env.includePattern(a, flags)
		if err != nil {
			return err
		}
		matches, err := r.glob(pattern)
		if err != nil {
			return fmt.Errorf("include %q: %w", a, err)
		}
		was := *active
		for _, m := range matches {
			if depth+1 > maxIncludeDepth {
				return fmt.Errorf("include %q: too many recursive configuration includes (max %d)", m, maxIncludeDepth)
			}
			lines, err := r.load(m)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("include %q: %w", m, err)
			}
			f := flags
			if !was {
				f |= neverMatch
			}
			if err := r.parse(m, lines, f, active, depth+1); err != nil {
				return err
			}
			*active = was // Match in an included file ends with it
		}
	}
	return nil
}

// includePattern is the glob an Include argument names: relative to
// ~/.ssh in a user config, to the system config's directory otherwise.
func (e *env) includePattern(a string, flags readFlags) (string, error) {
	if a == "" {
		return "", errors.New("keyword include: empty argument")
	}
	if a[0] == '~' && flags&userConf == 0 {
		return "", fmt.Errorf("bad include path %q: \"~\" only in user configurations", a)
	}
	if filepath.IsAbs(a) || a[0] == '~' {
		return a, nil
	}
	if flags&userConf != 0 {
		return filepath.Join(e.home, ".ssh", a), nil
	}
	return filepath.Join(filepath.Dir(e.sysFile), a), nil
}

// globConfig expands an Include pattern like glob(3) with GLOB_TILDE:
// sorted, and wildcards never match a leading dot.
func globConfig(pattern, home string) ([]string, error) {
	if strings.HasPrefix(pattern, "~") {
		name, rest, _ := strings.Cut(pattern[1:], "/")
		dir := home
		if name != "" {
			u, err := osuser.Lookup(name)
			if err != nil {
				return nil, nil // glob leaves an unknown ~user as is: no match
			}
			dir = u.HomeDir
		}
		pattern = filepath.Join(dir, rest)
	}
	matches, err := filepath.Glob(goGlob(pattern))
	if errors.Is(err, filepath.ErrBadPattern) {
		matches, err = nil, nil
		if _, serr := os.Lstat(pattern); serr == nil {
			matches = []string{pattern}
		}
	}
	if err != nil {
		return nil, err
	}
	pc := strings.Split(pattern, "/")
	out := matches[:0]
	for _, m := range matches {
		if !hiddenMatch(pc, strings.Split(m, "/")) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out, nil
}

// goGlob turns a glob(3) pattern into a filepath.Match one: a class is
// negated by "[!…]" there and by "[^…]" in Go. (glob(3) also takes a
// malformed pattern literally; globConfig handles that.)
func goGlob(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		b.WriteByte(p[i])
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case p[i] == '[' && i+1 < len(p) && p[i+1] == '!':
			b.WriteByte('^')
			i++
		case p[i] == '[' && i+1 < len(p) && p[i+1] == '^':
			b.WriteString(`\^`)
			i++
		}
	}
	return b.String()
}

// hiddenMatch reports whether a wildcard matched a name starting with '.'.
func hiddenMatch(pattern, match []string) bool {
	for i, j := len(pattern)-1, len(match)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if strings.HasPrefix(match[j], ".") && !strings.HasPrefix(pattern[i], ".") {
			return true
		}
	}
	return false
}

// oneArg is the single, non-empty argument of kw.
func oneArg(args []string, kw string) (string, error) {
	if len(args) == 0 || args[0] == "" {
		return "", fmt.Errorf("%s: missing argument", kw)
	}
	if len(args) > 1 {
		return "", fmt.Errorf("keyword %s: extra arguments at end of line", kw)
	}
	return args[0], nil
}

func setString(args []string, kw string, on bool, dst *string, set *bool) error {
	v, err := oneArg(args, kw)
	if err == nil && on && !*set {
		*dst, *set = v, true
	}
	return err
}

var (
	flagChoices   = map[string]int{"yes": 1, "true": 1, "no": 0, "false": 0}
	strictChoices = map[string]string{"yes": "yes", "true": "yes", "no": "no", "false": "no", "off": "no", "ask": "ask", "accept-new": "accept-new"}
	// controlMasterChoices are in ssh -G's spelling.
	controlMasterChoices = map[string]string{"yes": "true", "true": "true", "no": "false", "false": "false", "auto": "auto", "ask": "ask", "autoask": "autoask"}
	canonicalizeChoices  = map[string]string{"yes": "yes", "true": "yes", "no": "no", "false": "no", "always": "always"}
)

func setChoice(args []string, kw string, on bool, dst *int, choices map[string]int) error {
	v, err := oneArg(args, kw)
	if err != nil {
		return err
	}
	c, ok := choices[asciiLower(v)]
	if !ok {
		return fmt.Errorf("%s: unsupported option %q", kw, v)
	}
	if on && *dst < 0 {
		*dst = c
	}
	return nil
}

func setWord(args []string, kw string, on bool, dst *string, choices map[string]string) error {
	v, err := oneArg(args, kw)
	if err != nil {
		return err
	}
	c, ok := choices[asciiLower(v)]
	if !ok {
		return fmt.Errorf("%s: unsupported option %q", kw, v)
	}
	if on && *dst == "" {
		*dst = c
	}
	return nil
}

func setTime(args []string, kw string, on bool, dst *int) error {
	v, err := oneArg(args, kw)
	if err != nil {
		return err
	}
	secs := convtime(v)
	if secs < 0 {
		return fmt.Errorf("%s: invalid time value %q", kw, v)
	}
	if on && *dst < 0 {
		*dst = secs
	}
	return nil
}

// setFiles handles a known_hosts file list: the first line obtained sets
// the whole list.
func setFiles(args []string, kw string, on bool, dst *[]string, set *bool) error {
	take := on && !*set
	for i, a := range args {
		if a == "" {
			return fmt.Errorf("keyword %s: empty argument", kw)
		}
		if strings.EqualFold(a, "none") && len(args) > 1 {
			return fmt.Errorf("keyword %s: \"none\" argument must appear alone", kw)
		}
		if take {
			if i >= maxHostsFiles {
				return fmt.Errorf("too many %s entries (max %d)", kw, maxHostsFiles)
			}
			*dst = append(*dst, a)
			*set = true
		}
	}
	return nil
}
