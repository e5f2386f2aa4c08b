package ssh

import (
	"strings"
	"testing"
)

// TestOptionsMatchSSHG: ResolveOptions.Options are ssh's -o options:
// before the config files, first value wins, Host/Match/Include and bad
// values refused — compared with `ssh -G -o …`.
func TestOptionsMatchSSHG(t *testing.T) {
	g := newSSHG(t, "dest")
	for _, opts := range [][]string{
		{"User=bob", "User=alice"},
		{"Port 2222", "ProxyJump=jump1,u@jump2:23"},
		{"StrictHostKeyChecking=accept-new", "UserKnownHostsFile=/tmp/kh1 /tmp/kh2"},
		{"ConnectTimeout=7", "IdentityFile=/keys/k1", "IdentitiesOnly=yes"},
		{"HostName=10.1.1.1", "ServerAliveInterval=5", "ServerAliveCountMax=9"},
		{"ProxyCommand=none", "ProxyJump=j"},
		{"ControlMaster=auto", "ControlPersist=60s"}, {"HashKnownHosts=yes"},
		{"Host=x"}, {"Match=all"}, {"Port=abc"}, {"StrictHostKeyChecking=maybe"},
	} {
		what := strings.Join(opts, " | ")
		var args []string
		for _, o := range opts {
			args = append(args, "-o", o)
		}
		want, sshErr := g.run(append(args, "d1")...)
		ro := g.opts()
		ro.Options = opts
		cfg, err := Resolve("d1", ro)
		switch {
		case sshErr != nil && err == nil:
			t.Errorf("%s: agent accepted what ssh refuses: %v", what, sshErr)
		case sshErr == nil && err != nil:
			t.Errorf("%s: agent refused what ssh accepts: %v", what, err)
		case err == nil:
			g.compare(what, cfg, want)
		}
	}
}
