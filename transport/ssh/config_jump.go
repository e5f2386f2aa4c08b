package ssh

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// jumpHop is one ProxyJump hop; port 0 means unset.
type jumpHop struct {
	user, host string
	port       int
}

// ParseJump parses one ProxyJump hop the way ssh does: [user@]host[:port],
// [user@][v6addr]:port or ssh://[user@]host[:port]. port is 0 when the
// spec gives none; user is empty when it gives none.
func ParseJump(spec string) (user, host string, port int, err error) {
	if strings.Contains(spec, ",") {
		return "", "", 0, fmt.Errorf("ProxyJump hop %q: one hop expected, not a comma-separated list", spec)
	}
	h, err := parseHop(spec)
	if err != nil {
		return "", "", 0, fmt.Errorf("ProxyJump hop %q: %w", spec, err)
	}
	return h.user, h.host, h.port, nil
}

// parseJumpSpec parses a ProxyJump value: "none" (no hops) or
// comma-separated hops.
func parseJumpSpec(spec string) ([]jumpHop, error) {
	if strings.EqualFold(spec, "none") {
		return nil, nil
	}
	parts := strings.Split(spec, ",")
	hops := make([]jumpHop, 0, len(parts))
	for _, p := range parts {
		h, err := parseHop(p)
		if err != nil {
			return nil, fmt.Errorf("hop %q: %w", p, err)
		}
		hops = append(hops, h)
	}
	return hops, nil
}

func parseHop(s string) (jumpHop, error) {
	user, host, port, isURI, err := parseSSHURI(s)
	if isURI {
		return jumpHop{user, host, port}, err
	}
	return parseUserHostPort(s)
}

// parseUserHostPort parses [user@]host[:port] (ssh's parse_user_host_port):
// the user is everything before the last '@'; an IPv6 address needs
// brackets.
func parseUserHostPort(s string) (jumpHop, error) {
	var h jumpHop
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		if i == 0 {
			return h, errors.New("empty user name")
		}
		h.user, s = s[:i], s[i+1:]
	}
	field, rest, delim, ok := hpdelim(s)
	if !ok || delim == '/' || field == "" {
		return h, errors.New("bad or missing host name")
	}
	h.host = cleanHostname(field)
	if rest != "" {
		if h.port = a2port(rest); h.port <= 0 {
			return h, fmt.Errorf("bad port %q", rest)
		}
	}
	return h, nil
}

// parseSSHURI parses ssh://[user[;params]@]host[:port][/] (ssh's
// parse_ssh_uri). isURI is false when s does not start with "ssh://".
func parseSSHURI(s string) (user, host string, port int, isURI bool, err error) {
	rest, ok := strings.CutPrefix(s, "ssh://")
	if !ok {
		return "", "", 0, false, nil
	}
	if info, after, found := strings.Cut(rest, "@"); found {
		info, _, _ = strings.Cut(info, ";") // connection parameters are ignored
		if info == "" {
			return "", "", 0, true, errors.New("empty user name")
		}
		if user, ok = urlDecode(info); !ok {
			return "", "", 0, true, fmt.Errorf("bad %%-encoding in user name %q", info)
		}
		rest = after
	}
	field, rest, delim, ok := hpdelim(rest)
	if !ok || field == "" {
		return "", "", 0, true, errors.New("bad or missing host name")
	}
	if host, ok = validDomain(cleanHostname(field)); !ok {
		return "", "", 0, true, fmt.Errorf("invalid host name %q", field)
	}
	if delim == ':' && rest != "" {
		p, path, _ := strings.Cut(rest, "/")
		if port = a2port(p); port <= 0 {
			return "", "", 0, true, fmt.Errorf("bad port %q", p)
		}
		rest = path
	}
	if rest != "" {
		return "", "", 0, true, fmt.Errorf("path %q not allowed", rest)
	}
	return user, host, port, true, nil
}

// hpdelim splits "host" from what follows a ':' or '/' (ssh's hpdelim2); a
// host in [brackets] may contain ':'. ok is false for a bad bracket.
func hpdelim(s string) (field, rest string, delim byte, ok bool) {
	i := strings.IndexAny(s, ":/")
	if strings.HasPrefix(s, "[") {
		if i = strings.IndexByte(s, ']'); i < 0 {
			return "", "", 0, false
		}
		i++
	}
	if i < 0 || i == len(s) {
		return s, "", 0, true
	}
	if s[i] != ':' && s[i] != '/' {
		return "", "", 0, false
	}
	return s[:i], s[i+1:], s[i], true
}

// cleanHostname strips the brackets of "[addr]".
func cleanHostname(h string) string {
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

// validDomain checks a host name in an ssh:// URI like ssh's valid_domain
// and drops one trailing dot.
func validDomain(name string) (string, bool) {
	if name == "" || !isAlnum(name[0]) || strings.Contains(name, "..") {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '-' && c != '_' {
			return "", false
		}
	}
	return strings.TrimSuffix(name, "."), true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// urlDecode decodes %XX escapes and '+' (ssh's urldecode); NUL is refused.
func urlDecode(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '+':
			b.WriteByte(' ')
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			c, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil || c == 0 {
				return "", false
			}
			b.WriteByte(byte(c))
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), true
}

// formatJump renders a ProxyJump value the way `ssh -G` prints it: the
// hops before the last as written, the last one rebuilt from its parts.
func formatJump(spec string) (string, error) {
	extra, last := "", spec
	if i := strings.LastIndexByte(spec, ','); i > 0 {
		extra, last = spec[:i+1], spec[i+1:]
	}
	h, err := parseHop(last)
	if err != nil {
		return "", fmt.Errorf("ProxyJump %q: %w", spec, err)
	}
	var b strings.Builder
	b.WriteString(extra)
	if h.user != "" {
		b.WriteString(h.user + "@")
	}
	if strings.Contains(h.host, ":") || strings.Trim(h.host, "0123456789.") == "" {
		b.WriteString("[" + h.host + "]")
	} else {
		b.WriteString(h.host)
	}
	if h.port > 0 {
		b.WriteString(":" + strconv.Itoa(h.port))
	}
	return b.String(), nil
}

// resolveJumps fills cfg.ProxyJump: each hop resolved through the same
// config files as ssh would for `ssh -l USER -p PORT -J EARLIER-HOPS HOP`,
// the first hop's own ProxyJump chain flattened in front.
func resolveJumps(cfg *HostConfig, opts ResolveOptions, jc jumpContext, key string) error {
	hops := jc.override
	if !jc.hasOverride && cfg.ProxyJumpSpec != "" {
		var err error
		if hops, err = parseJumpSpec(cfg.ProxyJumpSpec); err != nil {
			return &ConfigError{Err: fmt.Errorf("ProxyJump %q: %w", cfg.ProxyJumpSpec, err)}
		}
	}
	if len(hops) == 0 {
		return nil
	}
	last := hops[len(hops)-1]
	jport, juser := last.port, last.user
	if jport <= 0 {
		jport = 22
	}
	if juser == "" {
		juser = cfg.User
	}
	if last.host == cfg.HostName && jport == cfg.Port && juser == cfg.User {
		return &ConfigError{Err: fmt.Errorf("jumphost loop via %s", last.host)}
	}
	if jc.hasOverride {
		return nil // the host that jumps through this one resolved the hops
	}
	stack := append(jc.stack[:len(jc.stack):len(jc.stack)], key)
	if len(stack) > maxJumpDepth {
		return &ConfigError{Err: fmt.Errorf("ProxyJump chain deeper than %d hops: %s", maxJumpDepth, strings.Join(stack, " -> "))}
	}
	// ssh expands these tokens in the command it runs for the hops.
	tok := map[byte]string{'h': cfg.HostName, 'n': cfg.Alias, 'p': strconv.Itoa(cfg.Port), 'r': cfg.User}
	raw := strings.Split(cfg.ProxyJumpSpec, ",")
	var chain []*HostConfig
	for i, h := range hops {
		var err error
		if h.user, err = percentExpand(h.user, tok); err == nil {
			h.host, err = percentExpand(h.host, tok)
		}
		if err != nil {
			return &ConfigError{Err: fmt.Errorf("ProxyJump %q: %w", cfg.ProxyJumpSpec, err)}
		}
		hops[i] = h
		sub := jumpContext{stack: stack}
		if i > 0 {
			sub.override, sub.overrideSpec, sub.hasOverride = hops[:i], strings.Join(raw[:i], ","), true
		} else if k := hopKey(h.user, h.host, h.port); slices.Contains(stack, k) {
			return &ConfigError{Err: fmt.Errorf("ProxyJump loop: %s -> %s", strings.Join(stack, " -> "), k)}
		}
		hc, err := resolve(h.host, ResolveOptions{
			ConfigFile: opts.ConfigFile, SystemConfigFile: opts.SystemConfigFile,
			Home: opts.Home, LocalUser: opts.LocalUser, User: h.user, Port: h.port, Cache: opts.Cache,
		}, sub)
		if err != nil {
			return fmt.Errorf("ProxyJump hop %q: %w", raw[i], err)
		}
		if i == 0 {
			chain = append(chain, hc.ProxyJump...)
		}
		hc.ProxyJump = nil
		chain = append(chain, hc)
	}
	cfg.ProxyJump = chain
	return nil
}

// hopKey names a destination with the user and port given for it.
func hopKey(user, host string, port int) string {
	k := host
	if user != "" {
		k = user + "@" + k
	}
	if port != 0 {
		k += ":" + strconv.Itoa(port)
	}
	return k
}
