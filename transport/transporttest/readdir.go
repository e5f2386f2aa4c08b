package transporttest

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sort"
	"testing"

	"github.com/autoshell/agent/transport"
)

func init() {
	// ReadDir lists names, sizes and kinds without following links; a
	// missing directory is fs.ErrNotExist, a file is an error.
	add("ReadDir", func(t *testing.T, f Fixture) {
		ctx := context.Background()
		d := path.Join(f.Dir, "list")
		if res := run(t, f.Transport, "mkdir -p "+d+"/sub && printf abc > "+d+"/a.txt && ln -s a.txt "+d+"/link && ln -s /nonexistent "+d+"/dangling"); res.ExitCode != 0 {
			t.Fatalf("setup: %s", res.Stderr)
		}
		fis, err := transport.ReadDir(ctx, f.Transport, d)
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(fis, func(i, j int) bool { return fis[i].Name() < fis[j].Name() })
		got := map[string]fs.FileInfo{}
		var names []string
		for _, fi := range fis {
			got[fi.Name()] = fi
			names = append(names, fi.Name())
		}
		if len(fis) != 4 || !got["sub"].IsDir() || got["a.txt"].Size() != 3 || !got["a.txt"].Mode().IsRegular() ||
			got["link"].Mode()&fs.ModeSymlink == 0 || got["dangling"].Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("entries %v", names)
		}
		if _, err := transport.ReadDir(ctx, f.Transport, path.Join(d, "nope")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing directory: %v", err)
		}
		if _, err := transport.ReadDir(ctx, f.Transport, path.Join(d, "a.txt")); err == nil {
			t.Errorf("a file listed as a directory")
		}
	})
}
