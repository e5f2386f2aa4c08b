//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A launcher run as root under sudo writes rules back into the login
// user's launcher directory: the file stays that user's, who reads it
// next (without it: a root-owned 0600 file the login user cannot read).
func TestWriteRulesetAsRootKeepsDirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to write into another user's directory")
	}
	dir := t.TempDir()
	const uid, gid = 65534, 65534 // nobody
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "x.rules")
	if err := WriteRuleset(file, Compile(Spec{})); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || st.Gid != gid || fi.Mode().Perm() != 0o600 {
		t.Errorf("rules written as root: uid %d gid %d mode %v, want %d:%d 0600", st.Uid, st.Gid, fi.Mode().Perm(), uid, gid)
	}
	// In root's own directory it stays root's.
	own := filepath.Join(t.TempDir(), "y.rules")
	if err := WriteRuleset(own, Compile(Spec{})); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(own); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("in root's directory: %v %v", fi, err)
	}
}
