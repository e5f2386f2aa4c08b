package ssh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve feeds random config text to Resolve: it must return a
// config or an error, never panic or hang, and what it returns must print.
func FuzzResolve(f *testing.F) {
	for _, name := range []string{"patterns", "defaults", "include", "match", "jump", "tokens", "values"} {
		data, err := os.ReadFile(filepath.Join("testdata", "config", name, "config"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), "web1")
	}
	f.Add("Host a\n ProxyJump b,u@c:22\nHost b\n ProxyJump a\n", "a")
	f.Add("Match host x,!y user \"a b\" localuser *\n User=\"q\\\" r\" # c\n", "u@x")
	f.Add("Include inc\n", "ssh://u@h:2")
	home := f.TempDir()
	inc := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(inc, 0o700); err != nil {
		f.Fatal(err)
	}
	// Relative Includes land here; one includes itself.
	if err := os.WriteFile(filepath.Join(inc, "inc"), []byte("Host *\n  Include inc\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	// Random configs must not run random commands: Match exec is
	// evaluated (tokens expanded) but "exits" 1 without running.
	matchExecHook = func(r *reader, cmd string) (int, error) {
		if _, err := percentExpand(cmd, r.env.tokens(&HostConfig{Alias: r.st.alias})); err != nil {
			return 0, err
		}
		return 1, nil
	}
	f.Cleanup(func() { matchExecHook = runMatchExec })
	f.Add("Match exec \"test %h = x\"\n User y\n", "x")
	f.Fuzz(func(t *testing.T, config, dest string) {
		lower := strings.ToLower(config)
		if strings.Contains(lower, "include") && strings.ContainsAny(config, "/~") {
			t.Skip("Include outside the test directory")
		}
		file := filepath.Join(home, "config") // inputs run one at a time per process
		if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Resolve(dest, ResolveOptions{ConfigFile: file, Home: home, LocalUser: "me"})
		if err != nil {
			if !strings.Contains(err.Error(), "ssh config") {
				t.Errorf("error without context: %v", err)
			}
			return
		}
		if err := WriteConfig(new(strings.Builder), cfg); err != nil {
			t.Errorf("WriteConfig of a resolved config: %v", err)
		}
	})
}

// FuzzParseJump: ParseJump never panics, and a hop it accepts prints (as
// `ssh -G` would) to a spec that parses back to the same hop.
func FuzzParseJump(f *testing.F) {
	for _, s := range []string{"bastion", "ops@bastion:2222", "a@b@c:5", "[2001:db8::1]:22", "u@[::1]", "h:ssh",
		"ssh://u%41+b;fp=x@h.example.:22/", "ssh://h", "@h", "h:0", "[::1]x", "ssh://u@h/path", "12", "a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		user, host, port, err := ParseJump(spec)
		if err != nil {
			return
		}
		printed, err := formatJump(spec)
		if err != nil {
			t.Fatalf("formatJump(%q): %v", spec, err)
		}
		u2, h2, p2, err := ParseJump(printed)
		if strings.ContainsAny(host, "@,") || strings.Contains(user, ",") {
			return // not representable in the [user@]host[:port] form ssh prints
		}
		if err != nil || u2 != user || h2 != host || p2 != port {
			t.Errorf("ParseJump(%q) = %q %q %d; printed %q parses to %q %q %d (%v)", spec, user, host, port, printed, u2, h2, p2, err)
		}
	})
}
