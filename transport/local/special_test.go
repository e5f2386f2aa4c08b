package local_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// TestReadFileRefusesSpecial: a fifo, a socket and a device are refused
// with transport.ErrSpecialFile, at once: a fifo's open would wait for a
// writer until the deadline.
func TestReadFileRefusesSpecial(t *testing.T) {
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	if err := syscall.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, sock, "/dev/null", link} {
		done := make(chan error, 1)
		go func() {
			_, err := tr.ReadFile(context.Background(), p, io.Discard)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, transport.ErrSpecialFile) {
				t.Errorf("read %s: %v, want transport.ErrSpecialFile", p, err)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("read %s: still waiting after 3 s (the fifo was opened)", p)
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close() // lets the blocked open return
			}
			<-done
		}
	}
}
