package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLookPath: the launcher finds a command as os/exec.LookPath does,
// which it no longer links: a name with a slash as it is, else the first
// executable of that name in $PATH; a directory, a file that is not
// executable, a missing one, or one found relative to the working
// directory are refused.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"a/prog": 0o755, "b/prog": 0o755, "b/plain": 0o644, "a/both": 0o644, "b/both": 0o700, "cwd/here": 0o755} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "a", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "cwd"))
	t.Setenv("PATH", filepath.Join(dir, "a")+"::"+filepath.Join(dir, "b")+":rel")
	for _, tc := range []struct{ file, want string }{
		{"prog", filepath.Join(dir, "a", "prog")},
		{"both", filepath.Join(dir, "b", "both")}, // a/both is not executable
		{"plain", ""},
		{"sub", ""},
		{"missing", ""},
		{"here", ""}, // found through the empty entry: relative
		{"./here", "./here"},
		{filepath.Join(dir, "b", "plain"), ""},
		{filepath.Join(dir, "a", "sub"), ""},
		{filepath.Join(dir, "a", "prog"), filepath.Join(dir, "a", "prog")},
	} {
		got, err := lookPath(tc.file)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("lookPath(%q) = %q, %v; want %q", tc.file, got, err, tc.want)
		}
		ref, referr := exec.LookPath(tc.file)
		if referr != nil {
			ref = ""
		}
		if ref != got {
			t.Errorf("lookPath(%q) = %q, os/exec finds %q (%v)", tc.file, got, ref, referr)
		}
	}
}
