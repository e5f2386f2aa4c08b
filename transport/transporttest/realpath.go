package transporttest

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/autoshell/agent/transport"
)

// readlinkF runs `readlink -f` on the host: the reference RealPath must
// agree with. ok is false when readlink fails (something on the way is
// missing, or a loop).
func readlinkF(t *testing.T, tr transport.Transport, p string) (string, bool) {
	t.Helper()
	res := run(t, tr, "readlink -f -- '"+strings.ReplaceAll(p, "'", `'\''`)+"'")
	return strings.TrimSuffix(res.Stdout, "\n"), res.ExitCode == 0
}

func init() {
	add("RealPathFollowsLinksLikeReadlinkF", func(t *testing.T, f Fixture) {
		rp, ok := f.Transport.(transport.RealPather)
		if !ok {
			t.Skip("the transport has no RealPath")
		}
		ctx := context.Background()
		dir, ok := readlinkF(t, f.Transport, f.Dir)
		if !ok {
			t.Fatalf("readlink -f %s failed", f.Dir)
		}
		// Links: relative and absolute to directories, a chain, ".." after
		// a link (the target's parent, not the link's), to a missing file,
		// into system paths, to a missing directory, a loop.
		setup := `set -e; cd "$1"; mkdir -p sub/inner; : >sub/f; : >sub/inner/g
			ln -s sub/inner deep; ln -s "$1/sub" abs; ln -s deep chain
			ln -s deep/../f2 up; ln -s sub/new dangling
			ln -s /etc/passwd passwd; ln -s /etc etc; ln -s /etc/agent-transporttest-missing etcnew
			ln -s /nonexistent-agent/x nowhere; ln -s loop2 loop1; ln -s loop1 loop2`
		if res := run(t, f.Transport, "sh -c '"+setup+"' sh "+f.Dir); res.ExitCode != 0 {
			t.Fatalf("setup: %s", res.Stderr)
		}
		for _, tc := range []struct {
			path string // under f.Dir
			want string // under dir when relative; "" when it must fail
		}{
			{"sub/f", "sub/f"},
			{"sub/missing", "sub/missing"},
			{"deep/g", "sub/inner/g"},
			{"deep/new", "sub/inner/new"},
			{"abs/f", "sub/f"},
			{"chain/g", "sub/inner/g"},
			{"chain", "sub/inner"},
			{"up", "sub/f2"},
			{"dangling", "sub/new"},
			{"passwd", "/etc/passwd"},
			{"etc/passwd", "/etc/passwd"},
			{"etc/agent-transporttest-missing", "/etc/agent-transporttest-missing"},
			{"etcnew", "/etc/agent-transporttest-missing"},
			{"nowhere", ""},
			{"nodir/x", ""},
			{"sub/f/x", ""},
			{"loop1", ""},
			{"loop1/x", ""},
			{"deep/../f", "sub/f"}, // ".." in the path climbs out of the link's target
			{"chain/../inner/../f", "sub/f"},
		} {
			p := f.Dir + "/" + tc.path // not path.Join: "deep/.." is not "."
			got, err := rp.RealPath(ctx, p)
			ref, refOK := readlinkF(t, f.Transport, p)
			if tc.want == "" {
				if err == nil {
					t.Errorf("RealPath(%s) = %q, want an error", tc.path, got)
				}
				if refOK {
					t.Errorf("readlink -f %s = %q, the case expects it to fail", tc.path, ref)
				}
				continue
			}
			want := tc.want
			if !path.IsAbs(want) {
				want = path.Join(dir, want)
			}
			if err != nil || got != want {
				t.Errorf("RealPath(%s) = %q, %v; want %q", tc.path, got, err, want)
			}
			if !refOK || ref != want {
				t.Errorf("readlink -f %s = %q (ok %v); the case expects %q", tc.path, ref, refOK, want)
			}
		}
		if _, err := rp.RealPath(ctx, path.Join(f.Dir, "nodir/x")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("RealPath(nodir/x) = %v, want fs.ErrNotExist", err)
		}

		// "~" is the home directory, links and all.
		home, _ := readlinkF(t, f.Transport, f.Home)
		if got, err := rp.RealPath(ctx, "~"); err != nil || got != home {
			t.Errorf("RealPath(~) = %q, %v; want %q", got, err, home)
		}
		if rel, ok := strings.CutPrefix(f.Dir, strings.TrimSuffix(f.Home, "/")+"/"); ok {
			if got, err := rp.RealPath(ctx, "~/"+rel+"/passwd"); err != nil || got != "/etc/passwd" {
				t.Errorf("RealPath(~/%s/passwd) = %q, %v; want /etc/passwd", rel, got, err)
			}
		}
	})

	add("RealPathCancelled", func(t *testing.T, f Fixture) {
		rp, ok := f.Transport.(transport.RealPather)
		if !ok {
			t.Skip("the transport has no RealPath")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := rp.RealPath(ctx, f.Dir); !errors.Is(err, context.Canceled) {
			t.Errorf("RealPath with a cancelled context: %v, want context.Canceled", err)
		}
	})
}

func init() {
	add("HomeDirIsHomeOfFilesAndCommands", func(t *testing.T, f Fixture) {
		hd, ok := f.Transport.(transport.HomeDirer)
		if !ok {
			t.Skip("the transport has no HomeDir")
		}
		got, err := hd.HomeDir(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got != f.Home {
			t.Errorf("HomeDir = %q, want %q", got, f.Home)
		}
		if sh := run(t, f.Transport, `printf '%s' "$HOME"`).Stdout; sh != got {
			t.Errorf("HomeDir = %q, but commands see HOME=%q", got, sh)
		}
		// "~/x" of the file methods is HomeDir's x.
		name := path.Base(f.Dir) + ".home"
		write(t, f.Transport, "~/"+name, []byte("h"), 0o600)
		defer run(t, f.Transport, "rm -f -- "+path.Join(got, name))
		if b := read(t, f.Transport, path.Join(got, name)); string(b) != "h" {
			t.Errorf("~/%s is not %s/%s: read %q", name, got, name, b)
		}
	})
}
