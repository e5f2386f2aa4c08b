package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// user@host:port is accepted where a host is (issue 29: it was "no such
// host"), as ssh://user@host:port; other destinations are as before.
func TestHostTargetHostPort(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte("Host web\n  HostName 10.0.0.5\n  Port 2200\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dest, user, host string
		port             int
	}{
		{"deploy@127.0.0.1:2222", "deploy", "127.0.0.1", 2222},
		{"example.org:2022", "", "example.org", 2022},
		{"ops@web", "ops", "10.0.0.5", 2200},
		{"ssh://ops@example.org:23", "ops", "example.org", 23},
		{"::1", "", "::1", 22},
	} {
		tg, err := HostTarget(c.dest, SSHOverrides{ConfigFile: cfg})
		if err != nil {
			t.Errorf("%s: %v", c.dest, err)
			continue
		}
		h := tg.SSH
		if h.HostName != c.host || h.Port != c.port || c.user != "" && h.User != c.user {
			t.Errorf("%s: user %q host %q port %d, want %q %q %d", c.dest, h.User, h.HostName, h.Port, c.user, c.host, c.port)
		}
	}
}

func FuzzHostPortURI(f *testing.F) {
	for _, s := range []string{"a@b:22", "b:0", "[::1]:22", "::1", "ssh://x", "@:1", "a@b:+1", "h:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := hostPortURI(s)
		if u != s && u != "ssh://"+s {
			t.Fatalf("hostPortURI(%q) = %q", s, u)
		}
	})
}
