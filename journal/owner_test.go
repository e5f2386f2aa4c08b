package journal

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ownerRestorer is dirRestorer that changes owners with lchown, or fails
// with fail when it is set.
type ownerRestorer struct {
	dirRestorer
	fail error
}

func (o ownerRestorer) Chown(_ context.Context, p string, uid, gid int) error {
	if o.fail != nil {
		return o.fail
	}
	return os.Lchown(p, uid, gid)
}

var _ OwnerRestorer = ownerRestorer{}

func ownerOf(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return Owner(int(st.Uid), int(st.Gid))
}

// TestUndoRestoresOwners: a file's owner and group kept by RecordOwned,
// and every entry's in a tree's manifest, are put back by undo after a
// chown; an owner undo cannot put back is an OwnerError naming the file,
// the rest is restored, and the session stays unrestored (exit 1).
func TestUndoRestoresOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to give files to another owner")
		}
		t.Skip("needs root to give files to another owner")
	}
	ctx := context.Background()
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	tree := filepath.Join(dir, "tree")
	for _, p := range []string{f, filepath.Join(tree, "sub", "g")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("before\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub/g", filepath.Join(tree, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(filepath.Join(tree, "sub", "g"), 0, 4); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []error{nil, syscall.EPERM} {
		t.Run(ownerCase(fail), func(t *testing.T) {
			j, err := Open(t.TempDir(), "s1", "h")
			if err != nil {
				t.Fatal(err)
			}
			if err := j.RecordOwned(ctx, f, []byte("before\n"), true, 0o644, "0:0", ""); err != nil {
				t.Fatal(err)
			}
			l, err := memTree{}.ListTree(ctx, tree)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.RecordTree(ctx, tree, l.Entries, func(ctx context.Context, p string, w io.Writer) error {
				_, err := memTree{}.ReadFile(ctx, p, w)
				return err
			}, ""); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, p := range []string{f, tree, filepath.Join(tree, "sub"), filepath.Join(tree, "sub", "g"), filepath.Join(tree, "l")} {
				want[p] = ownerOf(t, p)
				if err := os.Lchown(p, 65534, 65534); err != nil { // the session's chown -R nobody
					t.Fatal(err)
				}
			}
			for _, p := range []string{f, tree} {
				s, err := State(ctx, memTree{}, p, j.Bounds())
				if err != nil {
					t.Fatal(err)
				}
				if err := j.Changed(ctx, p, s); err != nil {
					t.Fatal(err)
				}
			}
			acts, err := j.RestoreWith(ctx, ownerRestorer{fail: fail}, RestoreOptions{})
			if fail == nil {
				if err != nil {
					t.Fatalf("undo: %v", err)
				}
				for p, o := range want {
					if got := ownerOf(t, p); got != o {
						t.Errorf("%s: owner %s after undo, want %s", p, got, o)
					}
				}
				return
			}
			var oe *OwnerError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "could not restore the owner") {
				t.Fatalf("undo that cannot chown: %v, want an owner error naming %s", err, f)
			}
			if len(acts) != 2 {
				t.Errorf("actions %v: the content of both was put back", acts)
			}
			for _, a := range acts {
				if !a.OwnerLeft || !strings.HasSuffix(a.String(), "but not its owner (below)") {
					t.Errorf("action %q does not say its owner was not put back", a)
				}
			}
			if b, _ := os.ReadFile(f); string(b) != "before\n" {
				t.Errorf("%s holds %q", f, b)
			}
			if _, err := j.Restore(ctx, ownerRestorer{}); err != nil {
				t.Errorf("a second undo that can chown: %v (the session must not be marked restored)", err)
			}
			for p, o := range want {
				if got := ownerOf(t, p); got != o {
					t.Errorf("%s: owner %s after the second undo, want %s", p, got, o)
				}
			}
		})
	}
}

func ownerCase(err error) string {
	if err == nil {
		return "chown works"
	}
	return "chown fails"
}

func TestParseOwner(t *testing.T) {
	for _, s := range []string{"", ":", "1", "1:", ":1", "-1:0", "a:b", "1:2:3", "0x1:0", " 1:1"} {
		if _, _, err := ParseOwner(s); err == nil {
			t.Errorf("ParseOwner(%q) accepted", s)
		}
	}
	if u, g, err := ParseOwner("1000:4"); err != nil || u != 1000 || g != 4 {
		t.Errorf("ParseOwner(1000:4) = %d %d %v", u, g, err)
	}
}
