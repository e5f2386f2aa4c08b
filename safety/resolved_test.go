package safety

import (
	"slices"
	"strings"
	"testing"
)

// AnalyzeResolved rates a command's files where the host's links lead,
// by the rules their own paths would get.
func TestAnalyzeResolved(t *testing.T) {
	p := DefaultPolicy()
	const home = "/home/u"
	for _, c := range []struct {
		cmd  string
		rs   []Touch
		want Level
	}{
		{"echo evil >> ~/x", []Touch{{Path: "~/x", Op: FileWrite, Real: home + "/.bashrc"}}, High},
		{"echo evil >> ~/x", []Touch{{Path: "~/x", Op: FileWrite, Real: home + "/notes"}}, Medium},
		{"echo evil >> ~/x", []Touch{{Path: "~/x", Op: FileWrite, Real: "/etc/profile.d/x.sh"}}, High},
		{"echo evil >> ~/x", []Touch{{Path: "~/x", Op: FileWrite, Unresolved: "loop"}}, High},
		{"echo evil >> " + home + "/x", []Touch{{Path: home + "/x", Op: FileWrite, Real: home + "/.profile"}}, High},
		{"cat ~/y", []Touch{{Path: "~/y", Real: home + "/.aws/credentials"}}, High},
		{"cat ~/y", []Touch{{Path: "~/y", Real: home + "/.ssh/id_ed25519.pub"}}, Safe},
		{"cat ~/y", []Touch{{Path: "~/y", Unresolved: "permission denied"}}, Medium},
		{"cat y", []Touch{{Path: "y", Real: "/etc/shadow"}}, High},
		{"cd /srv && cat y", []Touch{{Path: "/srv/y", Real: "/root/.netrc"}}, High},
		{"cd ~/d && cat k", []Touch{{Path: "~/d/k", Real: home + "/.gnupg/k"}}, High},
		{"grep -r x ~/d", []Touch{{Path: "~/d", Tree: true, Real: home + "/.ssh"}}, High},
		{"find ~/d -name x", []Touch{{Path: "~/d", Tree: true, Real: home + "/.ssh"}}, Safe},
		{"rm -f ~/d/*.tmp", []Touch{{Path: "~/d/*.tmp", Op: FileWrite, Real: home + "/.ssh/*.tmp"}}, High},
		{"cp -r ~/src ~/d", []Touch{{Path: "~/d", Op: FileWrite, Tree: true, Real: home + "/.config/agent"}}, High},
		{"cp -r ~/src ~/d", []Touch{{Path: "~/d", Op: FileWrite, Tree: true, Real: home + "/src2"}}, Medium},
		// What the host says is outside input.
		{"cat ~/y", []Touch{{Path: "~/y", Real: "relative/.ssh"}}, Medium},
		{"cat ~/y", []Touch{{Path: "~/y", Real: "/a/../b"}}, Medium},
		{"echo >> ~/y", []Touch{{Path: "~/y", Op: FileWrite, Real: "/a\x00b"}}, High},
		{"cat ~/y", []Touch{{Path: "~/y", Real: "/srv/.ssh\n/x"}}, Safe}, // ".ssh\n" is not .ssh
		{"cat ~/y", []Touch{{Path: "~/y", Real: "/srv/\xff\xfe"}}, Safe},
		{"echo x | tee ~/lk/*.txt", []Touch{ // a pattern: the links it matches
			{Path: "~/lk/*.txt", Op: FileWrite, Real: home + "/notes.txt"},
			{Path: "~/lk/*.txt", Op: FileWrite, Real: home + "/.bashrc"}}, High},
		{"echo x | tee ~/lk/*.txt", []Touch{
			{Path: "~/lk/*.txt", Op: FileWrite, Real: home + "/notes.txt"},
			{Path: "~/lk/*.txt", Op: FileWrite, Real: home + "/todo.txt"}}, Medium},
		{"echo hi", nil, Safe},
	} {
		an := p.AnalyzeResolved(c.cmd, home, c.rs)
		if an.Level != c.want {
			t.Errorf("%q with %+v = %s %q, want %s", c.cmd, c.rs, an.Level, an.Reasons, c.want)
		}
		if base := p.Analyze(c.cmd, home); an.Level < base.Level {
			t.Errorf("%q: %s, lower than %s without the host's links", c.cmd, an.Level, base.Level)
		}
	}
	an := p.AnalyzeResolved("cat ~/y", home, []Touch{{Path: "~/y", Real: home + "/.ssh/id_rsa"}})
	if !strings.Contains(strings.Join(an.Reasons, "\n"), "~/y leads to /home/u/.ssh/id_rsa") {
		t.Errorf("reasons %q do not say where ~/y leads", an.Reasons)
	}
	an = p.AnalyzeResolved("echo x >> ~/y", home, []Touch{{Path: "~/y", Op: FileWrite, Real: home + "/notes/y"}})
	if !slices.Contains(an.Touches, Touch{Path: "/home/u/notes/y", Op: FileWrite}) {
		t.Errorf("touches %+v leave out where ~/y leads (declared permissions check it)", an.Touches)
	}
}

// Raw keeps what a ".." climbs out of: the kernel walks it physically.
func TestTouchRaw(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]string{
		"echo k >> ~/u/../authorized_keys":        "~/u/../authorized_keys",
		"cat /srv/l/../x":                         "/srv/l/../x",
		"cd /srv && cat l/../x":                   "/srv/l/../x",
		"cat ~/plain":                             "",
		"cat /proc/self/root/etc/../etc/hostname": "",
	} {
		an := p.Analyze(cmd, "")
		got := ""
		for _, tc := range an.Touches {
			if tc.Raw != "" {
				got = tc.Raw
			}
		}
		if got != want {
			t.Errorf("%q: Raw %q, want %q (%+v)", cmd, got, want, an.Touches)
		}
	}
}

// FuzzAnalyzeResolved: whatever the host answers (names with newlines,
// non-UTF-8, relative or unclean paths), a command is never rated lower
// than without the host's links, a write to a place not known is High,
// and nothing panics.
func FuzzAnalyzeResolved(f *testing.F) {
	f.Add("echo x >> ~/x", "~/x", "/home/u/.bashrc", true, false)
	f.Add("cat ~/y", "~/y", "/home/u/.ssh/id_rsa", false, false)
	f.Add("cat y", "y", "a\nb", false, false)
	f.Add("cd d && cat ../k", "d/../k", "/\xff", false, true)
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, cmd, touch, real string, write, unresolved bool) {
		if len(cmd) > 512 || len(touch) > 256 || len(real) > 256 {
			return
		}
		r := Touch{Path: touch, Op: writeOp(write), Real: real}
		if unresolved {
			r.Real, r.Unresolved = "", "loop"
		}
		base := p.Analyze(cmd, "/home/u")
		an := p.AnalyzeResolved(cmd, "/home/u", []Touch{r})
		if an.Level < base.Level {
			t.Fatalf("%q: %s with the host's links, %s without", cmd, an.Level, base.Level)
		}
		// Every write the command makes, rated through a place not known.
		for _, tc := range base.Touches {
			if !tc.Writes() || base.Level == High {
				continue
			}
			u := tc
			u.Unresolved = "loop"
			if got := p.AnalyzeResolved(cmd, "/home/u", []Touch{u}); got.Level != High && tc.Path != "/dev/null" {
				t.Fatalf("%q: writes %s, whose place is not known, rated %s", cmd, tc.Path, got.Level)
			}
		}
	})
}
