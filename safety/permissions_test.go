package safety

import (
	"strings"
	"testing"
)

func TestMatchPathGlobs(t *testing.T) {
	for _, c := range []struct {
		pat, path  string
		tree, want bool
	}{
		{"/srv/app/**", "/srv/app", false, true},
		{"/srv/app/**", "/srv/app/a/b/c", false, true},
		{"/srv/app/**", "/srv/app", true, true},
		{"/srv/app/**", "/srv/application", false, false},
		{"/srv/app/*", "/srv/app/a", false, true},
		{"/srv/app/*", "/srv/app/a/b", false, false},
		{"/srv/app/*", "/srv/app/a", true, false},
		{"/srv/app", "/srv/app", true, false},
		{"/srv/**/x.conf", "/srv/a/b/x.conf", false, true},
		{"/srv/**/x.conf", "/srv/x.conf", false, true},
		{"/srv/**/x.conf", "/srv", true, false},
		{"/**", "/", true, true},
		{"/etc/nginx/*.conf", "/etc/nginx/site.conf", false, true},
		{"/etc/nginx/*.conf", "/etc/nginx/.conf", false, true},
		{"/etc/ng?nx/[a-c]*", "/etc/nginx/b", false, true},
	} {
		if got := matchPath(split(c.pat), split(c.path), c.tree); got != c.want {
			t.Errorf("matchPath(%q, %q, tree=%v) = %v, want %v", c.pat, c.path, c.tree, got, c.want)
		}
	}
	// A hostile pattern is bounded, not exponential.
	pat := strings.Repeat("/**/a*", 30)
	if matchPath(split(pat), split(strings.Repeat("/aaaa", 40)+"/b"), false) {
		t.Fatal("matched")
	}
}

func TestPermissionsCheck(t *testing.T) {
	p := &Permissions{Read: Globs{Limited: true, List: []string{"~/app/**", "/etc/hostname"}},
		Write:   Globs{Limited: true, List: []string{"~/app/**"}},
		Run:     Globs{Limited: true, List: []string{"cat", "~/app/bin/*"}},
		Network: NetworkRule{Limited: true}}
	home := "/home/u"
	ok := Needs{Reads: []Touch{{Path: "/home/u/app/a"}, {Path: "/etc/hostname"}}, Writes: []Touch{{Path: "/home/u/app", Tree: true}},
		Programs: []string{"cat", "/home/u/app/bin/run"}}
	if why := p.Check(ok, home); why != nil {
		t.Fatalf("refused: %v", why)
	}
	bad := Needs{Reads: []Touch{{Path: "/etc/shadow"}}, Writes: []Touch{{Path: "/home/u/*.txt", Pattern: true}, {Path: "/home", Tree: true}},
		Programs: []string{"rm", "/home/u/bin/run", "app/bin/run"}, Network: []string{"curl"}}
	got := strings.Join(p.Check(bad, home), "\n")
	for _, want := range []string{"reads /etc/shadow, which `read:` does not allow", "writes the files matching /home/u/*.txt",
		"writes everything under /home,", "runs rm,", "runs /home/u/bin/run,", "runs app/bin/run,", "connects to other hosts (curl), and `network:` is no"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	// A pattern need is allowed by the same pattern.
	p.Write.List = append(p.Write.List, "/var/log/app/*.log")
	if why := p.Check(Needs{Writes: []Touch{{Path: "/var/log/app/*.log", Pattern: true}}}, home); why != nil {
		t.Fatalf("refused: %v", why)
	}
	// Unknown effects: refused unless everything is allowed.
	unk := Needs{Unknown: []string{"python3 -c: runs inline code"}}
	if why := p.Check(unk, home); len(why) != 1 || !strings.Contains(why[0], "`read:`, `write:`, `run:`, `network:` do not allow everything") {
		t.Fatalf("got %v", why)
	}
	all := &Permissions{Read: Globs{Limited: true, List: []string{"/**"}}, Write: Globs{Limited: true, List: []string{"/**"}},
		Run: Globs{Limited: true, List: []string{"*", "/**"}}, Network: NetworkRule{Limited: true, Allowed: true}}
	if why := all.Check(unk, home); why != nil {
		t.Fatalf("refused: %v", why)
	}
	// Only writes limited (--allow-write): unknown effects refused for writes.
	aw := &Permissions{Write: Globs{Limited: true, List: []string{"/srv/**"}}}
	if why := aw.Check(unk, home); len(why) != 1 || !strings.Contains(why[0], "`write:` does not allow everything") {
		t.Fatalf("got %v", why)
	}
}

// FuzzPermissions: parsing a pattern never panics, an accepted one is
// cleaned once for all (parsing it again gives it back), and checking any
// path against it is bounded and never panics.
func FuzzPermissions(f *testing.F) {
	for _, s := range []string{"/srv/app/**", "~/a/*.log", "/[a", "/x/**.y", "rm", "~", "/a/../b", "/**/**/*", "python3*"} {
		f.Add(s, "/srv/app/a/b", "rm")
	}
	f.Fuzz(func(t *testing.T, pat, p, prog string) {
		for _, parse := range []func(string) (string, error){ParsePathGlob, ParseProgramGlob} {
			g, err := parse(pat)
			if err != nil {
				if g != "" {
					t.Fatalf("%q: error %v with a result %q", pat, err, g)
				}
				continue
			}
			if again, err := parse(g); err != nil || again != g {
				t.Fatalf("%q → %q → %q, %v", pat, g, again, err)
			}
			perms := &Permissions{Read: Globs{Limited: true, List: []string{g}}, Write: Globs{Limited: true, List: []string{g}},
				Run: Globs{Limited: true, List: []string{g}}, Network: NetworkRule{Limited: true}}
			n := Needs{Reads: []Touch{{Path: p}}, Writes: []Touch{{Path: p, Tree: true}, {Path: p, Pattern: true}}, Programs: []string{prog, p}}
			_ = perms.Check(n, "/home/u")
			_ = perms.Check(n, "")
		}
	})
}
