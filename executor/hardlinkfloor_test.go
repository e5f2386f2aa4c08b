package executor

import (
	"strings"
	"testing"
)

// TestParseHardLinks: the finds' answer is the host's (outside input):
// only clean absolute paths under the home (H) or a probe (P) count, and
// an H path maps to the protected path that shares its inode.
func TestParseHardLinks(t *testing.T) {
	home, probes := "/h", []string{"/h/.bashrc", "/h/.ssh"}
	out := strings.Join([]string{
		"H 64:10 /h/work/hardrc", "H 64:10 /h/.bashrc", "P 64:10 /h/.bashrc",
		"H 64:11 /h/work/keys", "P 64:11 /h/.ssh/authorized_keys",
		"H 64:12 /h/work/a", "H 64:12 /h/work/b",
		// Bad input: ignored.
		"H 64:13 relative/x", "H 64:14 /h/work/../.bashrc", "H 64:15 /elsewhere/x", "P 64:12 /h/work/a",
		"X 64:12 /h/work/c", "H", "H 64:16", "", "H  /h/work/noid", "\n",
	}, "\x00")
	got := parseHardLinks(out, home, probes)
	want := map[string]string{"/h/work/hardrc": "~/.bashrc", "/h/.bashrc": "", "/h/work/keys": "~/.ssh/authorized_keys",
		"/h/work/a": "", "/h/work/b": ""}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("%s: %q (%v), want %q", p, g, ok, w)
		}
	}
	// Bounded.
	var b strings.Builder
	for i := range maxHardLinks + 10 {
		b.WriteString("H 1:1 /h/f" + strings.Repeat("x", i%7) + "/" + string(rune('a'+i%26)) + "\x00")
	}
	if n := len(parseHardLinks(b.String(), home, probes)); n > maxHardLinks {
		t.Errorf("%d entries, want at most %d", n, maxHardLinks)
	}
}

func FuzzParseHardLinks(f *testing.F) {
	f.Add("H 64:10 /h/work/hardrc\x00P 64:10 /h/.bashrc\x00")
	f.Add("H 1:2 /h/a\x00H 1:2 /h/b\x00")
	f.Add("P x /h/.ssh/k\x00H x /h/k\x00")
	f.Fuzz(func(t *testing.T, out string) {
		for p, prot := range parseHardLinks(out, "/h", []string{"/h/.bashrc", "/h/.ssh"}) {
			if !strings.HasPrefix(p, "/h/") {
				t.Fatalf("%q is not under the home", p)
			}
			if prot != "" && prot != "~/.bashrc" && !strings.HasPrefix(prot, "~/.ssh") {
				t.Fatalf("%q → %q: not a probe", p, prot)
			}
		}
	})
}
