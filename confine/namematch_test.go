package confine

import (
	"path"
	"strings"
	"testing"
)

// anyMatch is what nameMatcher stands for: path.Match over every pattern.
func anyMatch(pats []string, name string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

var matcherPats = []string{"id_*", "*.pem", "*credentials*", ".env", ".env.*", "Login Data", "terraform.tfstate*",
	"*.key", "a*b", "[ab]c", `x\*`, "?", "*", "", "[", "**", "*a*b*"}

func TestNameMatcherIsPathMatch(t *testing.T) {
	m := newNameMatcher(matcherPats)
	for _, name := range []string{"id_rsa", "id_", "xid_rsa", "cert.pem", ".pem", "pem", "aws_credentials.json", "credentials",
		".env", ".env.local", ".envrc", "Login Data", "terraform.tfstate.backup", "a.key", "ab", "axxb", "ac", "x*", "xy",
		"q", "", "[", "main.go", "README"} {
		for i := range matcherPats {
			pats := matcherPats[i : i+1]
			if got, want := newNameMatcher(pats).match(name), anyMatch(pats, name); got != want {
				t.Errorf("pattern %q, name %q: %v, path.Match says %v", pats[0], name, got, want)
			}
		}
		if got, want := m.match(name), anyMatch(matcherPats, name); got != want {
			t.Errorf("all patterns, name %q: %v, path.Match says %v", name, got, want)
		}
	}
}

func FuzzNameMatcher(f *testing.F) {
	f.Add("id_*", "id_rsa")
	f.Add("*credentials*", "aws_credentials")
	f.Add("[a-", "a")
	f.Add(`\*x*`, "*xy")
	f.Fuzz(func(t *testing.T, pat, name string) {
		if strings.Contains(name, "/") {
			return
		}
		if got, want := newNameMatcher([]string{pat}).match(name), anyMatch([]string{pat}, name); got != want {
			t.Errorf("pattern %q, name %q: %v, path.Match says %v", pat, name, got, want)
		}
	})
}

func BenchmarkSecretNames(b *testing.B) {
	pats := append([]string(nil), matcherPats[:9]...)
	names := []string{"main.go", "README.md", "node_modules", "id_rsa", "config.yaml", "x.pem", "src", "Makefile"}
	b.Run("pathMatch", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				anyMatch(pats, n)
			}
		}
	})
	m := newNameMatcher(pats)
	b.Run("matcher", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				m.match(n)
			}
		}
	})
}
