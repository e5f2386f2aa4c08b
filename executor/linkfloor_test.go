package executor

import (
	"slices"
	"strings"
	"testing"
)

func TestParseFoundLinks(t *testing.T) {
	dirs := []string{"/h/.ssh", "/h/.bashrc"}
	for _, c := range []struct {
		out  string
		want []string
	}{
		{"/h/.ssh/config\x00/h/.bashrc\x00", []string{"/h/.ssh/config", "/h/.bashrc"}},
		{"", nil},
		{"/h/.ssh/config", []string{"/h/.ssh/config"}},                                     // no final NUL: the record is still whole
		{"/etc/passwd\x00/h/.sshx/a\x00", nil},                                             // outside the places asked
		{"/h/.ssh/../x\x00relative\x00/h/.ssh//a\x00/h/.ssh/a\x00", []string{"/h/.ssh/a"}}, // not clean, not absolute
		{"/h/.ssh/a\x00/h/.ssh/a\x00", []string{"/h/.ssh/a"}},
		{"/h/.ssh/a\nb\x00", []string{"/h/.ssh/a\nb"}}, // a newline is a name's
	} {
		if got := parseFoundLinks(c.out, dirs); !slices.Equal(got, c.want) {
			t.Errorf("parseFoundLinks(%q) = %q, want %q", c.out, got, c.want)
		}
	}
	many := strings.Repeat("/h/.ssh/a\x00", 1) + strings.Repeat("/h/.ssh/b/c\x00", 2)
	for i := range 2 * maxProtectedLinks {
		many += "/h/.ssh/l" + strings.Repeat("x", i) + "\x00"
	}
	if got := parseFoundLinks(many, dirs); len(got) != maxProtectedLinks {
		t.Errorf("%d links kept, want at most %d", len(got), maxProtectedLinks)
	}
}

func TestLinkTargetHit(t *testing.T) {
	targets := map[string]string{"/h/dotfiles/ssh_config": "~/.ssh/config", "/h/dot/vim": "~/.vim"}
	for real, want := range map[string]string{
		"/h/dotfiles/ssh_config":  "~/.ssh/config", // the target
		"/h/dotfiles":             "~/.ssh/config", // a directory holding it
		"/h/dot/vim/plugin/x":     "~/.vim",        // under a linked directory
		"/h/dotfiles/ssh_config2": "",
		"/h/dot/vi":               "",
		"/h/work/x":               "",
	} {
		if got := linkTargetHit(targets, real); got != want {
			t.Errorf("linkTargetHit(%q) = %q, want %q", real, got, want)
		}
	}
}

func FuzzParseFoundLinks(f *testing.F) {
	f.Add("/h/.ssh/config\x00/h/.bashrc\x00")
	f.Add("/h/.ssh/../x\x00\x00\x00relative")
	f.Fuzz(func(t *testing.T, out string) {
		dirs := []string{"/h/.ssh", "/h/.bashrc"}
		got := parseFoundLinks(out, dirs)
		if len(got) > maxProtectedLinks {
			t.Fatalf("%d links", len(got))
		}
		for _, l := range got {
			if !strings.HasPrefix(l, "/h/.ssh") && l != "/h/.bashrc" || strings.Contains(l, "\x00") || strings.Contains(l, "/../") {
				t.Fatalf("kept %q", l)
			}
		}
	})
}
