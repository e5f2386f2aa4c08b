package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Relative paths are the working directory's, as for the other file
// methods; "~" is the home directory.
func TestRealPathRelativeAndHome(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", "link"); err != nil {
		t.Fatal(err)
	}
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for in, want := range map[string]string{
		"link/new":    dir + "/sub/new",
		"link/":       dir + "/sub",
		"~/link/x":    dir + "/sub/x",
		"~":           dir,
		"missing/":    dir + "/missing",
		"link/../sub": dir + "/sub", // ".." of the link's target, the directory itself
	} {
		if got, err := tr.RealPath(ctx, in); err != nil || got != want {
			t.Errorf("RealPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := tr.RealPath(ctx, ""); err == nil {
		t.Error("RealPath(\"\") succeeded")
	}
	tr.Close()
	if _, err := tr.RealPath(ctx, "sub"); err == nil {
		t.Error("RealPath after Close succeeded")
	}
}

func TestRealPathErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("b", filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]error{
		"a":         syscall.ELOOP,
		"nodir/x":   fs.ErrNotExist,
		"f/x":       syscall.ENOTDIR,
		"nodir/../": fs.ErrNotExist,
	} {
		if got, err := RealPath(dir + "/" + in); !errors.Is(err, want) {
			t.Errorf("RealPath(%s) = %q, %v; want %v", in, got, err, want)
		}
	}
}
