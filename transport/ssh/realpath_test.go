package ssh

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeLinks is a host's tree for realPath: directories, files and links.
type fakeLinks struct {
	dirs  map[string]bool
	links map[string]string

	mu     sync.Mutex
	lstats int
	gate   chan struct{} // when set, every Lstat waits for it
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (f fakeInfo) Name() string       { return f.name }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

func (f *fakeLinks) Lstat(p string) (fs.FileInfo, error) {
	f.mu.Lock()
	f.lstats++
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if p == "/" || f.dirs[p] {
		return fakeInfo{path.Base(p), fs.ModeDir | 0o755}, nil
	}
	if _, ok := f.links[p]; ok {
		return fakeInfo{path.Base(p), fs.ModeSymlink | 0o777}, nil
	}
	if f.dirs[path.Dir(p)] || path.Dir(p) == "/" {
		if strings.HasPrefix(path.Base(p), "file") {
			return fakeInfo{path.Base(p), 0o644}, nil
		}
	}
	return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
}

func (f *fakeLinks) ReadLink(p string) (string, error) {
	if t, ok := f.links[p]; ok {
		return t, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: p, Err: syscall.EINVAL}
}

// TestRealPathOneRoundTrip checks that the lstats of a path's components
// are in flight together: each one waits until all six have been sent.
func TestRealPathOneRoundTrip(t *testing.T) {
	f := &fakeLinks{dirs: map[string]bool{"/a": true, "/a/b": true, "/a/b/c": true, "/a/b/c/d": true, "/a/b/c/d/e": true}}
	f.gate = make(chan struct{})
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			f.mu.Lock()
			n := f.lstats
			f.mu.Unlock()
			if n == 6 {
				break
			}
		}
		close(f.gate)
	}()
	got, err := realPath(f, "/a/b/c/d/e/file")
	if err != nil || got != "/a/b/c/d/e/file" {
		t.Fatalf("realPath = %q, %v", got, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lstats != 6 {
		t.Errorf("%d lstats, want 6 sent at once", f.lstats)
	}
}

func TestRealPathFake(t *testing.T) {
	f := &fakeLinks{
		dirs: map[string]bool{"/home": true, "/home/u": true, "/etc": true, "/srv": true, "/srv/x": true},
		links: map[string]string{
			"/home/u/l":    "/etc/file",
			"/home/u/rel":  "../../srv/x",
			"/home/u/dot":  "./rel/../x/./file9",
			"/home/u/loop": "loop",
			"/home/u/up":   "rel/..",
		},
	}
	for _, tc := range []struct{ in, want string }{
		{"/home/u/l", "/etc/file"},
		{"/home/u/rel/new", "/srv/x/new"},
		{"/home/u/dot", "/srv/x/file9"},
		{"/home/u/up", "/srv"},
		{"/home/u/missing", "/home/u/missing"},
		{"/", "/"},
	} {
		if got, err := realPath(f, tc.in); err != nil || got != tc.want {
			t.Errorf("realPath(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"/home/u/loop", syscall.ELOOP},
		{"/home/u/missing/x", fs.ErrNotExist},
		{"/etc/file1/x", syscall.ENOTDIR},
	} {
		if got, err := realPath(f, tc.in); !errors.Is(err, tc.want) {
			t.Errorf("realPath(%s) = %q, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := realPath(f, "relative"); err == nil {
		t.Error("realPath(relative) succeeded")
	}
}

// FuzzRealPath feeds link targets, as a host may hold any, to realPath: it
// ends, never panics, and gives a clean absolute path or an error.
func FuzzRealPath(f *testing.F) {
	f.Add("/a/l", "../b/../l/x", "/a/l/y")
	f.Add("/a/l", "", "/a/l")
	f.Add("/a/l", "/", "/a/l/../..")
	f.Add("/a/l", "l/l/l", "/a/l/./file")
	f.Fuzz(func(t *testing.T, link, target, query string) {
		fl := &fakeLinks{dirs: map[string]bool{"/a": true, "/b": true}, links: map[string]string{path.Clean("/" + link): target}}
		got, err := realPath(fl, "/"+query)
		if err == nil && (!path.IsAbs(got) || path.Clean(got) != got) {
			t.Fatalf("realPath(/%s) = %q: not a clean absolute path", query, got)
		}
	})
}
