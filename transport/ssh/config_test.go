package ssh

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeFiles creates files (slash paths relative to dir) and returns dir.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Without -F: ~/.ssh/config first, then the system file, whose relative
// Includes are taken from its own directory.
func TestResolveDefaultFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"home/.ssh/config":     "Host web\n  User from-user-config\n",
		"etc/ssh_config":       "Include sys.d/*.conf\nHost *\n  User from-system\n  Port 2022\n",
		"etc/sys.d/a.conf":     "ServerAliveInterval 15\n",
		"etc/sys.d/.hidden.co": "ServerAliveInterval 99\n",
	})
	opts := ResolveOptions{Home: filepath.Join(dir, "home"), SystemConfigFile: filepath.Join(dir, "etc", "ssh_config"), LocalUser: "me"}
	for _, tc := range []struct {
		dest, user string
		port       int
	}{{"web", "from-user-config", 2022}, {"db", "from-system", 2022}} {
		cfg, err := Resolve(tc.dest, opts)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.User != tc.user || cfg.Port != tc.port || cfg.ServerAliveInterval != 15*time.Second {
			t.Errorf("%s: user %q port %d alive %v", tc.dest, cfg.User, cfg.Port, cfg.ServerAliveInterval)
		}
	}

	// -F none reads nothing; missing default files are fine.
	for _, o := range []ResolveOptions{
		{ConfigFile: "none", Home: opts.Home, SystemConfigFile: opts.SystemConfigFile, LocalUser: "me"},
		{Home: filepath.Join(dir, "nohome"), SystemConfigFile: filepath.Join(dir, "nofile"), LocalUser: "me"},
	} {
		cfg, err := Resolve("web", o)
		if err != nil {
			t.Fatal(err)
		}
		want := &HostConfig{
			Alias: "web", HostName: "web", User: "me", Port: 22, ServerAliveCountMax: 3, StrictHostKeyChecking: "ask",
			IdentityFiles: []string{
				o.Home + "/.ssh/id_rsa", o.Home + "/.ssh/id_ecdsa", o.Home + "/.ssh/id_ecdsa_sk", o.Home + "/.ssh/id_ed25519",
				o.Home + "/.ssh/id_ed25519_sk", o.Home + "/.ssh/id_xmss", o.Home + "/.ssh/id_dsa",
			},
			IdentityFileSpecs:     defaultIdentities,
			UserKnownHostsFiles:   []string{o.Home + "/.ssh/known_hosts", o.Home + "/.ssh/known_hosts2"},
			GlobalKnownHostsFiles: []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"},
		}
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("defaults (%+v):\n got %+v\nwant %+v", o, cfg, want)
		}
	}
}

// The fields the dialer uses are expanded; ProxyJump is a flat hop list.
func TestResolveExpandedFields(t *testing.T) {
	t.Setenv("AGENT_TEST_DIR", "/env")
	dir := writeFiles(t, map[string]string{"config": `
Host t
  HostName %h.example
  User bob
  IdentityFile ~/.ssh/k_%h_%r
  IdentityFile none
  IdentityFile ${AGENT_TEST_DIR}/k
  IdentitiesOnly yes
  IdentityAgent ~/agent.sock
  UserKnownHostsFile %d/kh
  GlobalKnownHostsFile /g/%h
  ConnectTimeout 1m
  ServerAliveInterval 5
  ServerAliveCountMax 0
  StrictHostKeyChecking false
  ProxyJump j1
Host j1
  ProxyJump u0@j0:2200
Host *
  HostName %h.lan
`})
	home := filepath.Join(dir, "home")
	cfg, err := Resolve("t", ResolveOptions{ConfigFile: filepath.Join(dir, "config"), Home: home, LocalUser: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{home + "/.ssh/k_t.example_bob", "/env/k"}; !reflect.DeepEqual(cfg.IdentityFiles, want) {
		t.Errorf("IdentityFiles = %q, want %q", cfg.IdentityFiles, want)
	}
	if cfg.IdentityAgent != home+"/agent.sock" || !cfg.IdentitiesOnly || cfg.StrictHostKeyChecking != "no" ||
		cfg.ConnectTimeout != time.Minute || cfg.ServerAliveInterval != 5*time.Second || cfg.ServerAliveCountMax != 0 ||
		!reflect.DeepEqual(cfg.UserKnownHostsFiles, []string{home + "/kh"}) ||
		!reflect.DeepEqual(cfg.GlobalKnownHostsFiles, []string{"/g/t.example"}) {
		t.Errorf("settings: %+v", cfg)
	}
	var hops []string
	for _, h := range cfg.ProxyJump {
		hops = append(hops, h.User+"@"+h.HostName+":"+strconv.Itoa(h.Port))
		if h.ProxyJump != nil {
			t.Errorf("hop %s has its own ProxyJump list", h.Alias)
		}
	}
	if want := []string{"u0@j0.lan:2200", "me@j1.lan:22"}; !reflect.DeepEqual(hops, want) {
		t.Errorf("hops = %q, want %q", hops, want)
	}
}

// Bad input is a clear error, with file:line when a line is at fault.
func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		name, config, dest string
		opts               ResolveOptions
		want               string // in the error
		line               int    // 0: no line expected
	}{
		{"bad port", "Host *\n  Port 0x10\n", "h", ResolveOptions{}, `bad port "0x10"`, 2},
		{"port range", "Port 65536\n", "h", ResolveOptions{}, "bad port", 1},
		{"strict value", "\n\nStrictHostKeyChecking maybe\n", "h", ResolveOptions{}, `unsupported option "maybe"`, 3},
		{"bad jump", "Host x\n  ProxyJump a:b:c\n", "h", ResolveOptions{}, "invalid ProxyJump", 2},
		{"bad time", "ConnectTimeout soon\n", "h", ResolveOptions{}, "invalid time value", 1},
		{"quotes", "User \"bob\n", "h", ResolveOptions{}, "invalid quotes", 1},
		{"no argument", "HostName\n", "h", ResolveOptions{}, "no argument after keyword", 1},
		{"include loop", "Include config\n", "h", ResolveOptions{}, "too many recursive configuration includes", 1},
		{"match exec token", "Match exec \"echo %z\"\n  User x\n", "h", ResolveOptions{}, `unknown token %z`, 1},
		{"match final", "Match final host h\n", "h", ResolveOptions{}, `unsupported Match criterion "final"`, 1},
		{"match canonical", "Match canonical all\n", "h", ResolveOptions{}, `unsupported Match criterion "canonical"`, 1},
		{"match tagged", "Match tagged x\n", "h", ResolveOptions{}, `unsupported Match criterion "tagged"`, 1},
		{"match all+", "Match all host x\n", "h", ResolveOptions{}, "cannot be combined", 1},
		{"canonicalize", "CanonicalizeHostname yes\n", "h", ResolveOptions{}, "CanonicalizeHostname is not supported", 0},
		{"hostname token", "HostName %z.example\n", "h", ResolveOptions{}, "unknown token %z", 0},
		{"env var", "UserKnownHostsFile ${AGENT_NO_SUCH_VAR}/kh\n", "h", ResolveOptions{}, "${AGENT_NO_SUCH_VAR} has no value", 0},
		{"no such user", "IdentityFile ~no-such-user-xyz/key\n", "h", ResolveOptions{}, "no such user", 0},
		{"jump loop", "Host a\n  ProxyJump b\nHost b\n  ProxyJump a:2222\n", "a", ResolveOptions{}, "ProxyJump loop", 0},
		{"jump self", "Host a\n  ProxyJump a\n", "a", ResolveOptions{}, "jumphost loop via a", 0},
		{"hop error", "Host a\n  ProxyJump b\nHost b\n  HostName %z\n", "a", ResolveOptions{}, `ProxyJump hop "b"`, 0},
		{"empty user", "", "@h", ResolveOptions{}, "empty user name", 0},
		{"empty host", "", "u@", ResolveOptions{}, "empty host name", 0},
		{"uri port", "", "ssh://h:x", ResolveOptions{}, `bad port "x"`, 0},
		{"uri path", "", "ssh://h/p", ResolveOptions{}, "not allowed", 0},
		{"flag port", "", "h", ResolveOptions{Port: 70000}, "bad port 70000", 0},
		{"missing -F", "", "h", ResolveOptions{ConfigFile: "/nonexistent/agent-test-config"}, "no such file", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"home/.ssh/config": tc.config})
			file := filepath.Join(dir, "home", ".ssh", "config")
			opts := tc.opts
			opts.Home, opts.LocalUser = filepath.Join(dir, "home"), "me"
			if opts.ConfigFile == "" {
				opts.ConfigFile = file
			}
			_, err := Resolve(tc.dest, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			if !errors.As(err, new(*ConfigError)) {
				t.Errorf("error %v is not a *ConfigError", err)
			}
			if tc.line > 0 && !strings.Contains(err.Error(), file+":"+strconv.Itoa(tc.line)+":") {
				t.Errorf("error %q does not say %s:%d", err, file, tc.line)
			}
		})
	}
}

// Unsupported Match criteria do not matter where an earlier criterion
// already failed, nor in a file included from an inactive block.
func TestResolveUnsupportedMatchSkipped(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"config": "Match host other exec false\n  User x\nHost other\n  Include inc\nHost *\n  User ok\n",
		"inc":    "Match final\n  User y\n",
	})
	cfg, err := Resolve("h", ResolveOptions{ConfigFile: filepath.Join(dir, "config"), Home: dir, LocalUser: "me"})
	if err != nil || cfg.User != "ok" {
		t.Fatalf("Resolve = %+v, %v", cfg, err)
	}
}

func TestResolveUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can read any file")
	}
	dir := writeFiles(t, map[string]string{"config": "Include secret\n", "secret": "User x\n"})
	if err := os.Chmod(filepath.Join(dir, "secret"), 0); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve("h", ResolveOptions{ConfigFile: filepath.Join(dir, "config"), Home: dir, LocalUser: "me"})
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "config:1:") {
		t.Fatalf("error = %v", err)
	}
}

func TestParseJump(t *testing.T) {
	for _, tc := range []struct {
		spec, user, host string
		port             int
		err              string
	}{
		{"bastion", "", "bastion", 0, ""},
		{"ops@bastion:2222", "ops", "bastion", 2222, ""},
		{"a@b@c:5", "a@b", "c", 5, ""},
		{"[2001:db8::1]:22", "", "2001:db8::1", 22, ""},
		{"u@[::1]", "u", "::1", 0, ""},
		{"h:ssh", "", "h", 22, ""},
		{"h:", "", "h", 0, ""},
		{"ssh://u%41+b;fp=x@h.example.:22/", "uA b", "h.example", 22, ""},
		{"ssh://h", "", "h", 0, ""},
		{"SSH://u@h", "SSH://u", "h", 0, ""},
		{"", "", "", 0, "bad or missing host name"},
		{"@h", "", "", 0, "empty user name"},
		{"h:0", "", "", 0, "bad port"},
		{"h:b:c", "", "", 0, "bad port"},
		{"h/22", "", "", 0, "bad or missing host name"},
		{"[::1", "", "", 0, "bad or missing host name"},
		{"[::1]x", "", "", 0, "bad or missing host name"},
		{"::1", "", "", 0, "bad or missing host name"},
		{"ssh://u@-h", "", "", 0, "invalid host name"},
		{"ssh://[::1]:22", "", "", 0, "invalid host name"},
		{"ssh://u@h/path", "", "", 0, "not allowed"},
		{"ssh://u%zz@h", "", "", 0, "bad %-encoding"},
		{"ssh://@h", "", "", 0, "empty user name"},
		{"a,b", "", "", 0, "one hop expected"},
	} {
		user, host, port, err := ParseJump(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseJump(%q) error = %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || user != tc.user || host != tc.host || port != tc.port {
			t.Errorf("ParseJump(%q) = %q, %q, %d, %v; want %q, %q, %d", tc.spec, user, host, port, err, tc.user, tc.host, tc.port)
		}
	}
}

func TestWriteConfig(t *testing.T) {
	cfg := &HostConfig{
		Alias: "web", HostName: "10.0.0.1", User: "deploy", Port: 2222, IdentityFiles: []string{"/k/id"},
		StrictHostKeyChecking: "accept-new", ServerAliveInterval: 90 * time.Second, ServerAliveCountMax: 3,
		ConnectTimeout: 10 * time.Second, UserKnownHostsFiles: []string{"/kh1", "/kh2"}, ProxyJumpSpec: "a,ssh://u@b:2",
		ControlPath: "/cm/s",
	}
	var b strings.Builder
	if err := WriteConfig(&b, cfg); err != nil {
		t.Fatal(err)
	}
	want := `host web
user deploy
hostname 10.0.0.1
port 2222
identitiesonly no
hashknownhosts no
stricthostkeychecking accept-new
serveralivecountmax 3
serveraliveinterval 90
identityfile /k/id
userknownhostsfile /kh1 /kh2
connecttimeout 10
controlmaster false
controlpath /cm/s
proxyjump a,u@b:2
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	for _, bad := range []*HostConfig{{StrictHostKeyChecking: "sometimes"}, {ProxyJumpSpec: "a:b:c"}} {
		if err := WriteConfig(&b, bad); err == nil {
			t.Errorf("WriteConfig(%+v) succeeded", bad)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		s, pattern string
		want       bool
	}{
		{"web1", "web?", true}, {"web", "web?", false}, {"web10", "web?", false}, {"", "*", true},
		{"a.corp", "*.corp", true}, {"corp", "*.corp", false}, {"abc", "a*b*c", true}, {"abcb", "a*b", true},
		{"ab", "a**?", true}, {"a", "a**?", false}, {"WEB1", "web?", false}, {"aaaaaaaaaaaaaaaaaaaab", "*a*a*a*a*a*c", false},
	} {
		if got := matchPattern(tc.s, tc.pattern); got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v", tc.s, tc.pattern, got)
		}
	}
	for _, tc := range []struct {
		s, list string
		want    int
	}{{"web1", "db*,web*", 1}, {"web1", "!web1,*", -1}, {"x", "!web1", 0}, {"x", "", 0}} {
		if got := matchPatternList(tc.s, tc.list, false); got != tc.want {
			t.Errorf("matchPatternList(%q, %q) = %d", tc.s, tc.list, got)
		}
	}
}

func TestConvtime(t *testing.T) {
	for in, want := range map[string]int{
		"0": 0, "90": 90, "1m30s": 90, "1H": 3600, "1w1d": 691200, "+5": 5, "2147483647": 2147483647,
		"": -1, "5x": -1, "-1": -1, "1m-1": -1, "2147483648": -1, "1w3550w": -1, "s": -1, "1 m": -1,
	} {
		if got := convtime(in); got != want {
			t.Errorf("convtime(%q) = %d, want %d", in, got, want)
		}
	}
}
