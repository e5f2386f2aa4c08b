package transporttest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path"
	"syscall"
	"testing"

	"github.com/autoshell/agent/transport"
)

func init() {
	add("InspectAgreesWithRealPathStatAndRead", func(t *testing.T, f Fixture) {
		in, ok := f.Transport.(transport.Inspector)
		if !ok {
			t.Skip("the transport has no Inspect")
		}
		rp, ok := f.Transport.(transport.RealPather)
		if !ok {
			t.Fatal("a transport with Inspect has no RealPath")
		}
		ctx := context.Background()
		setup := `set -e; cd "$1"; mkdir -p d; printf "small\0x" >d/small; head -c 5000 /dev/zero >d/big
			ln -s d/small link; ln -s d/missing dangling; ln -s d dl; chmod 640 d/small`
		if res := run(t, f.Transport, "sh -c '"+setup+"' sh "+f.Dir); res.ExitCode != 0 {
			t.Fatalf("setup: %s", res.Stderr)
		}
		for _, tc := range []struct {
			name    string
			read    bool // its content comes back with readMax 100
			missing bool
		}{
			{"d/small", true, false}, {"link", true, false}, {"dl/small", true, false},
			{"d/big", false, false}, {"d", false, false},
			{"d/missing", false, true}, {"dangling", false, true},
		} {
			p := path.Join(f.Dir, tc.name)
			got, err := in.Inspect(ctx, p, 100)
			if err != nil {
				t.Errorf("Inspect(%s): %v", tc.name, err)
				continue
			}
			real, err := rp.RealPath(ctx, p)
			if err != nil || got.Real != real {
				t.Errorf("Inspect(%s).Real = %q, RealPath = %q, %v", tc.name, got.Real, real, err)
			}
			fi, err := f.Transport.Stat(ctx, p)
			switch {
			case tc.missing:
				if got.Info != nil || !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Inspect(%s): info %v for a missing file (Stat: %v)", tc.name, got.Info, err)
				}
			case err != nil || got.Info == nil:
				t.Errorf("Inspect(%s): info %v, Stat %v", tc.name, got.Info, err)
			case got.Info.Size() != fi.Size() && !fi.IsDir(), got.Info.Mode() != fi.Mode():
				t.Errorf("Inspect(%s): size %d mode %v, Stat says %d %v", tc.name, got.Info.Size(), got.Info.Mode(), fi.Size(), fi.Mode())
			}
			if got.Read != tc.read {
				t.Errorf("Inspect(%s): read %v, want %v", tc.name, got.Read, tc.read)
			}
			if tc.read && !bytes.Equal(got.Content, []byte("small\x00x")) {
				t.Errorf("Inspect(%s): content %q", tc.name, got.Content)
			}
			if got.Info != nil && !got.Owned {
				t.Errorf("Inspect(%s): no owner", tc.name)
			}
			if none, err := in.Inspect(ctx, p, 0); err != nil || none.Read {
				t.Errorf("Inspect(%s, 0) read its content: %v", tc.name, err)
			}
		}
		if _, err := in.Inspect(ctx, path.Join(f.Dir, "d/small/x/y"), 0); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("Inspect below a file: %v, want ErrNotExist or ENOTDIR", err)
		}
	})
}
