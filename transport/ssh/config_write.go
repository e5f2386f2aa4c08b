package ssh

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteConfig prints cfg the way `ssh -G` prints the same settings, one
// "key value" per line, in ssh -G's order and spelling: host, user,
// hostname, port, identitiesonly, stricthostkeychecking,
// serveralivecountmax, serveraliveinterval, identityfile (one line each),
// userknownhostsfile, connecttimeout, proxycommand, controlmaster,
// controlpath and proxyjump (when set).
// IdentityFile and ProxyJump are printed as configured, like ssh does;
// known_hosts files expanded.
func WriteConfig(w io.Writer, cfg *HostConfig) error {
	strict, ok := map[string]string{"": "ask", "ask": "ask", "yes": "true", "no": "false", "accept-new": "accept-new"}[cfg.StrictHostKeyChecking]
	if !ok {
		return fmt.Errorf("write ssh config: bad StrictHostKeyChecking %q", cfg.StrictHostKeyChecking)
	}
	port := cfg.Port
	if port == 0 {
		port = 22
	}
	var b strings.Builder
	line := func(key, value string) { b.WriteString(key + " " + value + "\n") }
	line("host", cfg.Alias)
	line("user", cfg.User)
	line("hostname", cfg.HostName)
	line("port", strconv.Itoa(port))
	line("identitiesonly", map[bool]string{true: "yes", false: "no"}[cfg.IdentitiesOnly])
	line("hashknownhosts", map[bool]string{true: "yes", false: "no"}[cfg.HashKnownHosts])
	line("stricthostkeychecking", strict)
	line("serveralivecountmax", strconv.Itoa(cfg.ServerAliveCountMax))
	line("serveraliveinterval", strconv.Itoa(int(cfg.ServerAliveInterval.Seconds())))
	ids := cfg.IdentityFileSpecs
	if ids == nil {
		ids = cfg.IdentityFiles // a HostConfig built without Resolve
	}
	for _, id := range ids {
		line("identityfile", id)
	}
	if len(cfg.UserKnownHostsFiles) == 0 {
		line("userknownhostsfile", "none")
	} else {
		line("userknownhostsfile", strings.Join(cfg.UserKnownHostsFiles, " "))
	}
	if cfg.ConnectTimeout > 0 || cfg.ConnectTimeoutSet {
		line("connecttimeout", strconv.Itoa(int(cfg.ConnectTimeout.Seconds())))
	} else {
		line("connecttimeout", "none")
	}
	if cfg.ProxyCommand != "" {
		line("proxycommand", cfg.ProxyCommand)
	}
	if cfg.ControlMaster == "" {
		line("controlmaster", "false")
	} else {
		line("controlmaster", cfg.ControlMaster)
	}
	if cfg.ControlPath != "" {
		line("controlpath", cfg.ControlPath)
	}
	if cfg.ProxyJumpSpec != "" {
		pj, err := formatJump(cfg.ProxyJumpSpec)
		if err != nil {
			return fmt.Errorf("write ssh config: %w", err)
		}
		line("proxyjump", pj)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write ssh config: %w", err)
	}
	return nil
}
