package executor

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// TestParseSymLinks: the probe's L records are the host's (outside
// input): a link kept is clean, absolute and in a place asked, with a
// clean absolute real path; at most maxProtectedLinks.
func TestParseSymLinks(t *testing.T) {
	dirs := []string{"/h/.ssh", "/h/.bashrc"}
	for _, c := range []struct {
		out  string
		want map[string]string
	}{
		{"L /h/.ssh/config\x00/h/dot/ssh_config\x00L /h/.bashrc\x00/h/dot/bashrc\x00",
			map[string]string{"/h/dot/ssh_config": "/h/.ssh/config", "/h/dot/bashrc": "/h/.bashrc"}},
		{"", map[string]string{}},
		{"L /h/.ssh/config\x00/h/x", map[string]string{"/h/x": "/h/.ssh/config"}},  // no final NUL: the record is still whole
		{"L /etc/passwd\x00/h/a\x00L /h/.sshx/a\x00/h/b\x00", map[string]string{}}, // outside the places asked
		{"L /h/.ssh/../x\x00/h/a\x00L relative\x00/h/b\x00L /h/.ssh/a\x00rel\x00L /h/.ssh/b\x00/h/c/../d\x00", map[string]string{}},
		{"H 1:2 /h/.ssh/a\x00L /h/.ssh/a\nb\x00/h/t\nu\x00", map[string]string{"/h/t\nu": "/h/.ssh/a\nb"}}, // a newline is a name's
		{"L /h/.ssh/a\x00", map[string]string{}},                                                           // no real path
		// readlink -m's records: the marker names the link; a link readlink
		// could not resolve has none; a real path that only looks like a
		// marker is a real path
		{"/.M/h/.ssh/config\x00/h/dot/ssh_config\x00/.M/h/.bashrc\x00/h/dot/bashrc\x00",
			map[string]string{"/h/dot/ssh_config": "/h/.ssh/config", "/h/dot/bashrc": "/h/.bashrc"}},
		{"/.M/h/.ssh/loop\x00/.M/h/.ssh/config\x00/h/dot/c\x00", map[string]string{"/h/dot/c": "/h/.ssh/config"}},
		{"/.M/h/.ssh/x\x00/.Mx/y\x00/.M/h/.ssh/z\x00/.M\x00", map[string]string{"/.Mx/y": "/h/.ssh/x", "/.M": "/h/.ssh/z"}},
		{"/.M/etc/passwd\x00/h/a\x00/.M/h/.ssh/../x\x00/h/b\x00/.M/h/.ssh/y\x00", map[string]string{}},
		{"/.M/h/.ssh/a\x00/h/b\x00", map[string]string{}}, // without the marker given: not read
	} {
		marker := "/.M"
		if strings.HasSuffix(c.out, "/.M/h/.ssh/a\x00/h/b\x00") {
			marker = ""
		}
		if got := parseSymLinks(c.out, dirs, marker); !maps.Equal(got, c.want) {
			t.Errorf("parseSymLinks(%q) = %q, want %q", c.out, got, c.want)
		}
	}
	var many strings.Builder
	for i := range 2 * maxProtectedLinks {
		fmt.Fprintf(&many, "L /h/.ssh/l%d\x00/h/t%d\x00", i, i)
	}
	if got := parseSymLinks(many.String(), dirs, "/.M"); len(got) != maxProtectedLinks {
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

func FuzzParseSymLinks(f *testing.F) {
	f.Add("L /h/.ssh/config\x00/h/dot/ssh_config\x00")
	f.Add("L /h/.ssh/../x\x00\x00\x00relative")
	f.Add("/.M/h/.ssh/x\x00/.M/h/.ssh/y\x00/h/t\x00")
	f.Fuzz(func(t *testing.T, out string) {
		dirs := []string{"/h/.ssh", "/h/.bashrc"}
		got := parseSymLinks(out, dirs, "/.M")
		if len(got) > maxProtectedLinks {
			t.Fatalf("%d links", len(got))
		}
		for real, l := range got {
			if !strings.HasPrefix(l, "/h/.ssh") && l != "/h/.bashrc" || strings.Contains(l, "\x00") || strings.Contains(l, "/../") ||
				!strings.HasPrefix(real, "/") || strings.Contains(real, "\x00") {
				t.Fatalf("kept %q → %q", real, l)
			}
		}
	})
}
