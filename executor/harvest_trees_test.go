package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// treeScript, run by a real sh on real files, prints the files of a
// tree and of a glob, settings first, and nothing of .git, of files
// over treeFileMax or of what a path's shell syntax would run.
func TestTreeScript(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "we'ird $(touch PWNED) dir;x")
	files := map[string]string{
		"app/config.json":         `{"password": "x"}`,
		"app/deep/a/b/c/d.env":    "TOKEN=too-deep",
		"app/deep/a/b/c.env":      "TOKEN=deep-enough",
		"app/.git/config":         "[core]",
		"app/big.env":             strings.Repeat("x", treeFileMax+1),
		"conf/one.yml":            "a: 1",
		"app/ends in space ":      "sp",
		"conf/two.ini":            "b = 2",
		"conf/skip.txt":           "c",
		filepath.Join(odd, "o.x"): "odd",
	}
	for name, content := range files {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := treeScript([]string{treeRoot(filepath.Join(dir, "app")), treeRoot(filepath.Join(dir, "conf") + "/*.[iy]*"), treeRoot(odd), treeRoot(filepath.Join(dir, "none", "*"))})
	// GNU find (-printf: one process a file) and BusyBox's (wc for the sizes)
	shells := map[string][]string{"gnu": {"/bin/sh"}}
	if bb, err := exec.LookPath("busybox"); err == nil {
		shells["busybox"] = []string{bb, "sh"}
	} else {
		t.Log("no busybox: its find not tried")
	}
	for name, sh := range shells {
		cmd := exec.Command(sh[0], append(sh[1:], "-c", script)...)
		cmd.Dir = dir
		if name == "busybox" {
			// BusyBox's sh runs its own applets (find, wc, head, awk) first
			cmd.Env = append(os.Environ(), "PATH=/nonexistent")
			if out, err := exec.Command(sh[0], "find", "/", "-maxdepth", "0", "-printf", "").CombinedOutput(); err == nil {
				t.Logf("busybox find has -printf (%q): its fallback not tried", out)
			}
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, script)
		}
		got := map[string]string{}
		for _, f := range splitTreeFiles(string(out)) {
			rel, _ := filepath.Rel(dir, f.path)
			got[rel] = f.data
		}
		want := map[string]string{"app/config.json": `{"password": "x"}`, "app/deep/a/b/c.env": "TOKEN=deep-enough", "conf/one.yml": "a: 1",
			"conf/two.ini": "b = 2", filepath.Join(filepath.Base(odd), "o.x"): "odd", "app/ends in space ": "sp"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s: %q, want %q", name, k, got[k], v)
			}
		}
		for _, k := range []string{"app/deep/a/b/c/d.env", "app/.git/config", "app/big.env", "conf/skip.txt"} {
			if _, ok := got[k]; ok {
				t.Errorf("%s: %s read", name, k)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Error("a path's $(…) ran")
	}
}

// splitTreeFiles stops where its input is not what treeScript prints:
// no header, a size that is no number or larger than what follows, a
// file that shrank while it was read.
func TestSplitTreeFilesBadInput(t *testing.T) {
	for in, n := range map[string]int{
		"":                            0,
		"x":                           0,
		"\n":                          0,
		"\n3 /a\nabc":                 1,
		"\n3 /a\nabc\n2 /b\nxy":       2,
		"\n3 /a\nab":                  0,
		"\n-1 /a\n":                   0,
		"\nx /a\nabc":                 0,
		"\n3/a\nabc":                  0,
		"\n3 /a\nabcX\n1 /b\nz":       1,
		"\n99999999999999999999 /a\n": 0,
	} {
		if got := splitTreeFiles(in); len(got) != n {
			t.Errorf("%q: %d files, want %d", in, len(got), n)
		}
	}
}

func FuzzSplitTreeFiles(f *testing.F) {
	f.Add("\n3 /a\nabc\n2 /b b\nxy")
	f.Add("\n0 /e\n")
	f.Fuzz(func(t *testing.T, in string) {
		total := 0
		for _, x := range splitTreeFiles(in) {
			total += len(x.data) + len(x.path)
		}
		if total > len(in) {
			t.Fatalf("%d bytes out of %d", total, len(in))
		}
	})
}

// treeRoot leaves a path's glob characters bare and quotes every other
// byte: sh sees one word, expands only the glob.
func TestTreeRoot(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a b.json", "c.json", "d.txt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	out, err := exec.Command("/bin/sh", "-c", "for f in "+treeRoot(dir+"/*.json")+" "+treeRoot(dir+"/$HOME `id` *")+"; do echo \"[$f]\"; done").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "[" + dir + "/a b.json]\n[" + dir + "/c.json]\n[" + dir + "/$HOME `id` *]\n"
	if string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
