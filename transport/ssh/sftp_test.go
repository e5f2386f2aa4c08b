package ssh

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

func TestWriteFileFollowsLinksAndKeepsMode(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	ctx := context.Background()
	dir := scratchDir(t, srv.Host)
	target := filepath.Join(dir, "real.conf")
	link := filepath.Join(dir, "link.conf")
	os.WriteFile(target, []byte("old"), 0o600)
	os.Chmod(target, 0o4750|os.ModeSetuid) // setuid survives too
	os.Symlink("real.conf", link)

	if _, err := tr.WriteFile(ctx, link, strings.NewReader("new content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if got := fileText(t, target); got != "new content" {
		t.Errorf("target holds %q", got)
	}
	fi, err := tr.Stat(ctx, link)
	if err != nil || fi.Size() != int64(len("new content")) || fi.Mode().Perm() != 0o750 || fi.Mode()&os.ModeSetuid == 0 {
		t.Errorf("Stat(link) = %v %d, %v; want the target's, mode 0750 setuid", fi.Mode(), fi.Size(), err)
	}

	if os.Geteuid() == 0 { // root may keep another user's ownership
		os.Chown(target, 65534, 65534)
		if _, err := tr.WriteFile(ctx, target, strings.NewReader("x"), 0); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(target)
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 65534 || sys.Gid != 65534 {
			t.Errorf("owner changed to %d:%d", sys.Uid, sys.Gid)
		}
	}
	if _, err := tr.WriteFile(ctx, dir, strings.NewReader("x"), 0); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("WriteFile over a directory: %v", err)
	}
}

// stallingReader yields n bytes, then blocks until ctx is done.
type stallingReader struct {
	ctx context.Context
	n   int
}

func (r *stallingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		<-r.ctx.Done()
		return 0, r.ctx.Err()
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

func TestWriteFileCancelled(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	dir := scratchDir(t, srv.Host)
	p := filepath.Join(dir, "data")
	os.WriteFile(p, []byte("old"), 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := tr.WriteFile(ctx, p, &stallingReader{ctx: ctx, n: 1 << 20}, 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if got := fileText(t, p); got != "old" {
		t.Errorf("file holds %d bytes, want the old content", len(got))
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		entries, _ := os.ReadDir(dir)
		if len(entries) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporary file left: %v", entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cancellingWriter cancels its context on the first write and counts the
// writes that come after.
type cancellingWriter struct {
	cancel context.CancelFunc
	writes atomic.Int64
}

func (w *cancellingWriter) Write(p []byte) (int, error) {
	w.writes.Add(1)
	w.cancel()
	time.Sleep(time.Millisecond)
	return len(p), nil
}

func TestReadFileCancelled(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(d.Host), Options{})
	p := filepath.Join(scratchDir(t, d.Host), "big")
	os.WriteFile(p, bytes.Repeat([]byte("x"), 16<<20), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	w := &cancellingWriter{cancel: cancel}
	n, err := tr.ReadFile(ctx, p, w)
	if !errors.Is(err, context.Canceled) || n >= 16<<20 {
		t.Fatalf("ReadFile = %d, %v", n, err)
	}
	after := w.writes.Load()
	time.Sleep(200 * time.Millisecond)
	if w.writes.Load() != after {
		t.Errorf("the writer was written to after ReadFile returned")
	}
	var b bytes.Buffer
	if n, err := tr.ReadFile(context.Background(), p, &b); err != nil || n != 16<<20 {
		t.Errorf("ReadFile after a cancelled one: %d, %v", n, err)
	}
	if n, err := tr.ReadFile(context.Background(), filepath.Dir(p), io.Discard); !errors.Is(err, syscall.EISDIR) || n != 0 {
		t.Errorf("ReadFile of a directory: %d, %v", n, err)
	}
}
