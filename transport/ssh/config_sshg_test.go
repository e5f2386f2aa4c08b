package ssh

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// These tests run the real OpenSSH client (`ssh -G -F FILE HOST`, which
// needs no network) on the same configs and compare what it prints with
// WriteConfig's output, key by key.

// sshG runs `ssh -G` for one config directory: HOME is the directory's
// home/ (ssh takes relative Includes from $HOME/.ssh) and only the -F file
// is read.
type sshG struct {
	t    *testing.T
	bin  string
	dir  string // a temporary copy of testdata/config/<name>
	home string
	pw   string // the passwd home, which ssh uses for "~" in known_hosts
	hops int    // hops compared
}

func newSSHG(t *testing.T, name string) *sshG {
	t.Helper()
	bin, err := exec.LookPath("ssh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ssh not found: %v (CI must install openssh-client)", err)
		}
		t.Skipf("ssh not found: %v", err)
	}
	u, err := osuser.Current()
	if err != nil {
		t.Fatal(err)
	}
	g := &sshG{t: t, bin: bin, dir: t.TempDir(), pw: u.HomeDir}
	if name != "" {
		if err := os.CopyFS(g.dir, os.DirFS(filepath.Join("testdata", "config", name))); err != nil {
			t.Fatal(err)
		}
	}
	g.home = filepath.Join(g.dir, "home")
	if err := os.MkdirAll(filepath.Join(g.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *sshG) opts() ResolveOptions {
	return ResolveOptions{
		ConfigFile:       filepath.Join(g.dir, "config"),
		SystemConfigFile: filepath.Join(g.dir, "system_config"), // must be ignored under -F
		Home:             g.home,
	}
}

// run returns ssh -G's settings for args (flags and destination), or its
// error output.
func (g *sshG) run(args ...string) (map[string][]string, error) {
	cmd := exec.Command(g.bin, append([]string{"-G", "-F", filepath.Join(g.dir, "config")}, args...)...)
	cmd.Env = []string{"HOME=" + g.home, "PATH=" + os.Getenv("PATH"), "AGENT_TEST_DIR=" + os.Getenv("AGENT_TEST_DIR")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(strings.TrimSpace(stderr.String()))
	}
	return parseG(string(out)), nil
}

func parseG(out string) map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, " ")
		m[k] = append(m[k], v)
	}
	return m
}

// compare checks every key WriteConfig prints for cfg against ssh's.
func (g *sshG) compare(what string, cfg *HostConfig, want map[string][]string) {
	g.t.Helper()
	var b strings.Builder
	if err := WriteConfig(&b, cfg); err != nil {
		g.t.Errorf("%s: WriteConfig: %v", what, err)
		return
	}
	got := parseG(b.String())
	for k, vs := range got {
		w := want[k]
		if k == "userknownhostsfile" || k == "controlpath" { // ssh expands "~" and %d from passwd
			for i := range w {
				w[i] = strings.ReplaceAll(w[i], g.pw+"/", g.home+"/")
			}
		}
		if strings.Join(vs, "\n") != strings.Join(w, "\n") {
			g.t.Errorf("%s: %s\n agent: %q\nssh -G: %q", what, k, vs, w)
		}
	}
}

// checkHops compares each ProxyJump hop with `ssh -G -l U -p P -J EARLIER
// HOP`, the command ssh runs for it; chain is cfg's flattened hop list.
func (g *sshG) checkHops(what string, cfg *HostConfig, chain []*HostConfig) {
	g.t.Helper()
	if cfg.ProxyJumpSpec == "" {
		if len(chain) != 0 {
			g.t.Errorf("%s: %d hops without ProxyJump", what, len(chain))
		}
		return
	}
	parts := strings.Split(cfg.ProxyJumpSpec, ",")
	n := len(chain) - len(parts) // hops in front come from the first hop's own ProxyJump
	if n < 0 {
		g.t.Errorf("%s: %d hops for ProxyJump %q", what, len(chain), cfg.ProxyJumpSpec)
		return
	}
	for i, part := range parts {
		user, host, port, err := ParseJump(part)
		if err != nil {
			g.t.Fatalf("%s: %v", what, err)
		}
		var args []string
		if user != "" {
			args = append(args, "-l", user)
		}
		if port != 0 {
			args = append(args, "-p", strconv.Itoa(port))
		}
		if i > 0 {
			args = append(args, "-J", strings.Join(parts[:i], ","))
		}
		hop := what + " hop " + part
		want, err := g.run(append(args, host)...)
		if err != nil {
			g.t.Errorf("%s: ssh -G: %v", hop, err)
			continue
		}
		g.compare(hop, chain[n+i], want)
		g.hops++
		if i == 0 {
			g.checkHops(hop, chain[n], chain[:n])
		}
	}
}

func TestResolveMatchesSSHG(t *testing.T) {
	cases := map[string][]string{
		"patterns": {"FOO", "foo", "web1", "web3", "web10", "web", "db1", "x.corp", "bad.corp", "quoted", "tab2", "neg-only"},
		"defaults": {"app", "db", "other"},
		"include":  {"web1", "inc-block", "tilde", "other", "zzz"},
		"match":    {"alias1", "alias2", "bob@alias2", "web1", "real1.example", "x.example.com", "other", "nobody@other"},
		"jump":     {"target", "v6target", "none-target", "chained", "ipjump", "bastion3"},
		"tokens":   {"tok", "MiXed", "u@tok"},
		"values":   {"eq", "svc", "esc", "false"},
		"fileonly": {"anything"},
		"dest":     {"d1", "bob@d1", "ssh://alice@d1:77", "ssh://d1", "other"},
	}
	t.Setenv("AGENT_TEST_DIR", "/agent-test-dir") // used by testdata/config/tokens
	var compared atomic.Int32
	t.Cleanup(func() { t.Logf("compared %d destinations with ssh -G", compared.Load()) })
	for name, dests := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := newSSHG(t, name)
			// Every destination is resolved afresh and through one cache
			// shared by all of the directory's destinations, as a batch
			// resolves its hosts: both must be what ssh -G says.
			shared := g.opts()
			shared.Cache = NewConfigCache()
			for _, dest := range dests {
				cfg, err := Resolve(dest, g.opts())
				if err != nil {
					t.Errorf("Resolve(%q): %v", dest, err)
					continue
				}
				cached, err := Resolve(dest, shared)
				if err != nil {
					t.Errorf("Resolve(%q) with a shared cache: %v", dest, err)
					continue
				}
				want, err := g.run(dest)
				if err != nil {
					t.Fatalf("ssh -G %s: %v", dest, err)
				}
				g.compare(dest, cfg, want)
				g.checkHops(dest, cfg, cfg.ProxyJump)
				g.compare(dest+" (cached)", cached, want)
				g.checkHops(dest+" (cached)", cached, cached.ProxyJump)
				compared.Add(1)
			}
			if name == "jump" && g.hops < 8 {
				t.Errorf("only %d ProxyJump hops compared", g.hops)
			}
		})
	}
}

// Flags (-l, -p, -i) come before the destination and the files.
func TestResolveFlagsMatchSSHG(t *testing.T) {
	g := newSSHG(t, "dest")
	key := filepath.Join(g.home, ".ssh", "flagkey")
	for _, tc := range []struct {
		dest string
		opts ResolveOptions
		args []string
	}{
		{"bob@d1", ResolveOptions{User: "carol", Port: 99}, []string{"-l", "carol", "-p", "99"}},
		{"ssh://bob@d1:77", ResolveOptions{Port: 99}, []string{"-p", "99"}},
		{"d1", ResolveOptions{IdentityFiles: []string{key, key}}, []string{"-i", key, "-i", key}},
		{"other", ResolveOptions{IdentityFiles: []string{key}}, []string{"-i", key}},
	} {
		opts := g.opts()
		opts.User, opts.Port, opts.IdentityFiles = tc.opts.User, tc.opts.Port, tc.opts.IdentityFiles
		cfg, err := Resolve(tc.dest, opts)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", tc.dest, err)
		}
		want, err := g.run(append(tc.args, tc.dest)...)
		if err != nil {
			t.Fatalf("ssh -G: %v", err)
		}
		g.compare(strings.Join(append(tc.args, tc.dest), " "), cfg, want)
	}
}

// Single lines in a Host block: agent and ssh must agree on the values or
// both refuse the line.
func TestConfigLinesMatchSSHG(t *testing.T) {
	lines := []string{
		"User=u", " =User u", "User==u", `"User" u`, `User a\ b`, `User 'a b'c`, "USER=x", "User x #c",
		"\tUser\t=\tx", `User "a b"`, `User a\"b`, `User a\\b`, `User a\b`, "User #c", `User ""`, "User a b",
		`User "a`, "User", "Port +22", "Port 010", "Port http", "Port 0", "Port 65536", "Port 0x10", "Port SSH",
		"ConnectTimeout +5", "ConnectTimeout 1m1", "ConnectTimeout 1W1d1H1m1S", "ConnectTimeout 2147483647",
		"ConnectTimeout 2147483648", "ConnectTimeout 1m-1", "ConnectTimeout 5x", "ConnectTimeout ''",
		"ServerAliveCountMax -1", "ServerAliveCountMax 2147483648", "ServerAliveCountMax 1x",
		"StrictHostKeyChecking Accept-New", "StrictHostKeyChecking maybe", "IdentitiesOnly maybe",
		"IdentitiesOnly no", "ProxyJump a b", "ProxyJump a, b", `ProxyJump "a"`, "ProxyJump x#y", "ProxyJump NONE",
		"ProxyJump a,none", "ProxyJump ,a", "ProxyJump a,", "ProxyJump h:ssh", "ProxyJump h:", "ProxyJump h/22",
		"ProxyJump a:b:c", "ProxyJump [::1", "ProxyJump [::1]x", "ProxyJump u@[::1]:7", "ProxyJump [h]:7",
		"ProxyJump 12", "ProxyJump @a", "ProxyJump a@b@c:5", "ProxyJump ssh://u%41+b@h.x:22/",
		"ProxyJump ssh://u@h_x.", "ProxyJump ssh://u@-h", "ProxyJump ssh://u;x=y@h:2", "ProxyJump ssh://u@h:2/p",
		"ProxyJump ssh://[::1]", "ProxyJump SSH://u@h", "ProxyJump ssh://u%zz@h", "ProxyJump ssh://u%00@h",
		"ProxyJump ssh://@h", "ProxyJump a:0", "UserKnownHostsFile none x", "UserKnownHostsFile x none",
		"UserKnownHostsFile ''", "UserKnownHostsFile /a #c", "Host", `Host ""`, "Host #", "Include",
		"Match", "Match all host x", "Match host", "Match !all", "Match host x,y,!z", "Match all # c",
		"HostName %z", "HostName a%", "HostName %%%h", "IdentityFile %z", "Bogus", "HashKnownHosts yes", "HashKnownHosts maybe",
	}
	for i, line := range lines {
		t.Run(strconv.Itoa(i), func(t *testing.T) { // TempDir names must not get the line's '%'
			t.Logf("line: %s", line)
			t.Parallel()
			g := newSSHG(t, "")
			file := filepath.Join(g.dir, "config")
			if err := os.WriteFile(file, []byte("Host x\n"+line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want, sshErr := g.run("x")
			cfg, err := Resolve("x", g.opts())
			switch {
			case line == "Bogus": // agent ignores keywords it does not use
			case line == "IdentityFile %z" && err != nil: // ssh fails on it only when connecting
			case sshErr != nil && err == nil:
				t.Errorf("%q: agent accepted what ssh refuses: %v", line, sshErr)
			case sshErr == nil && err != nil:
				t.Errorf("%q: agent refused what ssh accepts: %v", line, err)
			case err != nil && errors.As(err, new(*ConfigError)) && strings.Contains(err.Error(), file) &&
				!strings.Contains(err.Error(), file+":2:"):
				t.Errorf("%q: error %q does not say %s:2", line, err, file)
			case err == nil:
				g.compare(line, cfg, want)
			}
		})
	}
}

// Include nesting: ssh allows 16 levels and fails at 17, and a loop fails.
func TestIncludeDepthMatchesSSHG(t *testing.T) {
	for _, levels := range []int{16, 17, -1} {
		g := newSSHG(t, "")
		ssh := filepath.Join(g.home, ".ssh")
		write := func(name, text string) {
			if err := os.WriteFile(filepath.Join(ssh, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if levels < 0 {
			write("loop", "Include loop\n")
		} else {
			for i := 1; i < levels; i++ {
				write("f"+strconv.Itoa(i), "Include f"+strconv.Itoa(i+1)+"\n")
			}
			write("f"+strconv.Itoa(levels), "User deepest\n")
		}
		top := "Include f1\n"
		if levels < 0 {
			top = "Host other\n  Include loop\n"
		}
		if err := os.WriteFile(filepath.Join(g.dir, "config"), []byte(top), 0o644); err != nil {
			t.Fatal(err)
		}
		_, sshErr := g.run("x")
		cfg, err := Resolve("x", g.opts())
		if (sshErr == nil) != (err == nil) {
			t.Errorf("%d levels: ssh error %v, agent error %v", levels, sshErr, err)
		}
		if err == nil && cfg.User != "deepest" {
			t.Errorf("%d levels: User = %q", levels, cfg.User)
		}
		if err != nil && !strings.Contains(err.Error(), "too many recursive configuration includes") {
			t.Errorf("%d levels: error %q", levels, err)
		}
	}
}

// Include patterns are globbed like glob(3): sorted, "[!…]" negates, no
// wildcard matches a leading dot, a malformed pattern is literal.
func TestIncludeGlobMatchesSSHG(t *testing.T) {
	files := map[string]string{"a.conf": "from-a", "b.conf": "from-b", "[x": "from-bracket", ".h.conf": "from-hidden", "sub/c.conf": "from-sub"}
	for i, pattern := range []string{
		"g/[!a]*", "g/[^a]*", "g/[x", "g/[", "g/*", "g/?.conf", "g/*/c.conf", `g/\a.conf`, "~/.ssh/g/b*",
		"g/.h*", "g/*.h*", "g/nomatch*", `"g/b.conf" g/a.conf`,
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			g := newSSHG(t, "")
			for name, user := range files {
				p := filepath.Join(g.home, ".ssh", "g", filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("User "+user+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(g.dir, "config"), []byte("Include "+pattern+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := g.run("x")
			if err != nil {
				t.Fatalf("Include %s: ssh -G: %v", pattern, err)
			}
			cfg, err := Resolve("x", g.opts())
			if err != nil {
				t.Fatalf("Include %s: %v", pattern, err)
			}
			g.compare("Include "+pattern, cfg, want)
		})
	}
}
