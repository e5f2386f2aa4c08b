package ssh

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHostAliases: Host names from the user's file, its Includes (at any
// depth, inside a Host block too) and the system file, without patterns
// or negations, each once.
func TestHostAliases(t *testing.T) {
	home := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".ssh", "config"), "Host web1 web2 *.prod !bad\n  User x\nHost db?\nInclude conf.d/*\nHost \"quoted name\" web1\n")
	write(filepath.Join(home, ".ssh", "conf.d", "a"), "Match user x\nInclude ~/.ssh/more\nhost   bastion\n")
	write(filepath.Join(home, ".ssh", "more"), "Host deep\nInclude more\n") // includes itself: bounded
	sys := filepath.Join(home, "etc", "ssh_config")
	write(sys, "Host sysbox\nInclude ~/.ssh/nope\n")
	got, err := HostAliases(ResolveOptions{Home: home, LocalUser: "me", SystemConfigFile: sys})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"web1", "web2", "quoted name", "deep", "bastion", "sysbox"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("aliases %q, want %q", got, want)
	}
	got, err = HostAliases(ResolveOptions{Home: home, LocalUser: "me", ConfigFile: filepath.Join(home, ".ssh", "more")})
	if err != nil || !slices.Equal(got, []string{"deep"}) {
		t.Errorf("-F more: %q, %v", got, err)
	}
	if got, err := HostAliases(ResolveOptions{Home: home, LocalUser: "me", ConfigFile: "none"}); err != nil || len(got) != 0 {
		t.Errorf("-F none: %q, %v", got, err)
	}
	if got, err := HostAliases(ResolveOptions{Home: t.TempDir(), LocalUser: "me", SystemConfigFile: filepath.Join(home, "missing")}); err != nil || len(got) != 0 {
		t.Errorf("no files: %q, %v", got, err)
	}
}

// FuzzHostAliases: any config text (Includes of itself, bad quotes,
// NULs) lists names or fails with an error, never a panic.
func FuzzHostAliases(f *testing.F) {
	f.Add("Host a b *.c !d\nInclude self\n")
	f.Add("Host \"unterminated\nInclude ~/x /etc/*\n")
	f.Add("\x00Host\tq\r\n  host=z\n")
	f.Fuzz(func(t *testing.T, text string) {
		home := t.TempDir()
		p := filepath.Join(home, ".ssh", "self")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		names, _ := HostAliases(ResolveOptions{Home: home, LocalUser: "me", ConfigFile: p})
		for _, n := range names {
			if n == "" || n[0] == '!' || strings.ContainsAny(n, "*?") {
				t.Fatalf("listed %q", n)
			}
		}
	})
}
