package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
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

// TestLinkProbeScript runs homeLinks' command on real files, with GNU
// find and with BusyBox's (no -printf: stat gives the inodes): a hard
// link six deep to ~/.ssh/authorized_keys, one to ~/.bashrc, one to a
// file of ~/.git (pruned: not reported as a name of it), and a symbolic
// link ~/.ssh/config into ~/dotfiles are all found, in one run.
func TestLinkProbeScript(t *testing.T) {
	home := t.TempDir()
	mk := func(rel, content string) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(old, new string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, new)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(home, old), filepath.Join(home, new)); err != nil {
			t.Fatal(err)
		}
	}
	mk(".ssh/authorized_keys", "ssh-ed25519 AAAA k\n")
	mk(".bashrc", "# rc\n")
	mk(".git/objects/ab/cdef", "blob\n")
	mk("dotfiles/ssh_config", "Host *\n")
	link(".ssh/authorized_keys", "a/b/c/d/e/keys")
	link(".bashrc", "work/hardrc")
	link(".git/objects/ab/cdef", "work/obj")
	// a loop (readlink fails on it) and a dangling link beside the link
	// looked for: each link's record stays its own
	for name, to := range map[string]string{".ssh/config": filepath.Join(home, "dotfiles/ssh_config"), ".ssh/a-loop": "a-loop", ".ssh/b-dangling": "nowhere/x"} {
		if err := os.Symlink(to, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	var probes []string
	pol := safety.DefaultPolicy()
	for _, q := range pol.LinkProbes() {
		probes = append(probes, home+q[1:])
	}
	marker := linkMarker()
	script := linkProbeScript(home, probes, marker)
	finders := map[string]string{"gnu": os.Getenv("PATH")}
	if bb, err := exec.LookPath("busybox"); err == nil {
		dir := t.TempDir()
		for _, applet := range []string{"sh", "find", "stat", "readlink"} {
			if err := os.Symlink(bb, filepath.Join(dir, applet)); err != nil {
				t.Fatal(err)
			}
		}
		finders["busybox"] = dir
	} else {
		t.Log("no busybox: its find not tried")
	}
	for name, pathEnv := range finders {
		c := exec.Command("sh", "-c", script)
		if name == "busybox" {
			c = exec.Command(filepath.Join(pathEnv, "sh"), "-c", script)
		}
		c.Env = []string{"PATH=" + pathEnv}
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if marked := strings.Contains(string(out), marker+"/"); marked != (name == "gnu") {
			t.Errorf("%s: one readlink for all links: %v", name, marked)
		}
		hard, sym := parseHardLinks(string(out), home, probes), parseSymLinks(string(out), probes, marker)
		for p, want := range map[string]string{"a/b/c/d/e/keys": "~/.ssh/authorized_keys", "work/hardrc": "~/.bashrc", "work/obj": ""} {
			if got, ok := hard[filepath.Join(home, p)]; !ok || got != want {
				t.Errorf("%s: hard link ~/%s: %q (found %v), want %q\n%q", name, p, got, ok, want, out)
			}
		}
		if _, ok := hard[filepath.Join(home, ".git/objects/ab/cdef")]; ok {
			t.Errorf("%s: ~/.git was searched: %q", name, out)
		}
		if got := sym[filepath.Join(home, "dotfiles/ssh_config")]; got != filepath.Join(home, ".ssh/config") {
			t.Errorf("%s: the link ~/.ssh/config was not found: %v\n%q", name, sym, out)
		}
	}
}
