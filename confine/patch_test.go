package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rulesUnder is rs's rules on h and below, by path.
func rulesUnder(rs Ruleset, h string) map[string]Rule {
	m := map[string]Rule{}
	for _, r := range rs.Rules {
		if r.Path == h || strings.HasPrefix(r.Path, h+"/") {
			m[r.Path] = r
		}
	}
	return m
}

// TestPatchIsCompile: entries made, removed and changed in a listed
// directory (the home: it holds denied paths) patch the rules into those
// a compilation gives; a change patching cannot follow (a name the Spec
// denies, an entry a path is resolved through, a new entry in a directory
// searched for Public names) compiles again.
func TestPatchIsCompile(t *testing.T) {
	h, s := home(t, NoProtected)
	rs, l := compileListed(s)
	if _, ok := l.dirs[h]; !ok {
		t.Fatalf("the home is not patchable: %v", l.dirs)
	}
	steps := []struct {
		name  string
		do    func() error
		patch bool // patched, not compiled again
	}{
		{"a new file", func() error { return os.WriteFile(filepath.Join(h, "new"), []byte("x"), 0o600) }, true},
		{"a new directory", func() error { return os.Mkdir(filepath.Join(h, "newdir"), 0o700) }, true},
		{"a new link", func() error { return os.Symlink("/etc", filepath.Join(h, "newlink")) }, true},
		{"a file removed", func() error { return os.Remove(filepath.Join(h, "new")) }, true},
		{"a directory become a file", func() error {
			if err := os.Remove(filepath.Join(h, "newdir")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(h, "newdir"), nil, 0o600)
		}, true},
		{"a name the Spec denies", func() error { return os.WriteFile(filepath.Join(h, ".bash_profile"), nil, 0o600) }, false},
		{"the denied directory's parent replaced", func() error {
			if err := os.Rename(filepath.Join(h, ".config"), filepath.Join(h, ".config-old")); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(h, "work"), filepath.Join(h, ".config"))
		}, false},
		{"a new file in a directory searched for Public names", func() error {
			return os.WriteFile(filepath.Join(h, ".ssh", "id_new.pub"), nil, 0o600)
		}, false},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for i := range rs.Stamps {
			rs.Stamps[i].Hot = true // compare entries now, whatever the clock
		}
		prs, pl, changed, ok := patch(rs, l)
		if ok != st.patch {
			t.Fatalf("%s: patched %v, want %v", st.name, ok, st.patch)
		}
		want, wl := compileListed(s)
		if ok {
			if got := rulesUnder(prs, h); !mapsEqual(got, rulesUnder(want, h)) {
				t.Fatalf("%s: patched rules differ from compiled ones:\n%v\n%v", st.name, got, rulesUnder(want, h))
			}
			if !changed && st.name != "a new link" {
				t.Errorf("%s: rules not changed", st.name)
			}
			if prs.Stale() {
				t.Errorf("%s: stale after the patch", st.name)
			}
			rs, l = prs, pl
			continue
		}
		rs, l = want, wl
	}
	if rs.Allows(filepath.Join(h, ".ssh", "id_rsa"), false) || !rs.Allows(filepath.Join(h, "newdir"), true) {
		t.Error("the rules at the end: a secret readable or a new file not writable")
	}
}

func mapsEqual(a, b map[string]Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRestrictorPatches: files made one by one in a listed directory are
// readable by the next confined command without compiling the rules
// again (the first staleness compiles, to learn what can be patched);
// the secret beside them stays unreadable.
func TestRestrictorPatches(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r, err := NewRestrictor(Compile(s))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(h, name)
		if err := os.WriteFile(p, []byte("content "+name), 0o600); err != nil {
			t.Fatal(err)
		}
		var out []byte
		if err := r.Do(func() {
			out, _ = exec.Command("/bin/sh", "-c", "cat "+p+"; cat "+h+"/.ssh/id_rsa").CombinedOutput()
		}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(out), "content "+name) || strings.Contains(string(out), "SECRET") {
			t.Fatalf("%s: %q", name, out)
		}
	}
	r.mu.Lock()
	compiles, patches := r.compiles, r.patches
	r.mu.Unlock()
	if compiles > 1 || patches < 4 {
		t.Errorf("compiled %d times, patched %d: want one compilation, the rest patched", compiles, patches)
	}
}
