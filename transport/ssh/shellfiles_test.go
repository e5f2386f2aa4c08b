package ssh

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// corruptingCat puts, first on the test server's PATH, a cat that changes
// the bytes it passes ("a" to "b") the first `times` times it runs (every
// time when negative), as a link that corrupts a transfer would.
func corruptingCat(t *testing.T, times int) {
	t.Helper()
	bin := t.TempDir()
	count := filepath.Join(bin, "count")
	script := `#!/bin/sh
n=$(/bin/cat ` + count + ` 2>/dev/null || echo 0); echo $((n + 1)) > ` + count + `
if [ "$n" -lt ` + strconv.Itoa(times) + ` ] || [ ` + strconv.Itoa(times) + ` -lt 0 ]; then /bin/cat "$@" | tr a b; else exec /bin/cat "$@"; fi
`
	if err := os.WriteFile(filepath.Join(bin, "cat"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
}

func ctx20(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A shell transfer whose bytes do not check out is sent again once; a
// second mismatch fails with nothing written (no file, no temporary
// file) and a read hands nothing to its writer.
func TestShellTransferMismatch(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	dir := scratchDir(t, srv.Host)
	content := []byte(strings.Repeat("abc\n", 1000))

	t.Run("once", func(t *testing.T) {
		corruptingCat(t, 1)
		tr := dial(t, hostConfig(srv.Host), Options{ShellFiles: true})
		p := filepath.Join(dir, "once.txt")
		if n, err := tr.WriteFile(ctx20(t), p, bytes.NewReader(content), 0o640); err != nil || n != int64(len(content)) {
			t.Fatalf("a write corrupted once: %d, %v", n, err)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
			t.Errorf("written %q…", b[:min(len(b), 20)])
		}
	})
	t.Run("always", func(t *testing.T) {
		corruptingCat(t, -1)
		tr := dial(t, hostConfig(srv.Host), Options{ShellFiles: true})
		p := filepath.Join(dir, "always.txt")
		os.WriteFile(p, []byte("an old file\n"), 0o600)
		_, err := tr.WriteFile(ctx20(t), p, bytes.NewReader(content), 0o640)
		if !errors.Is(err, errSumMismatch) || !strings.Contains(err.Error(), "nothing was written") {
			t.Fatalf("a write corrupted every time: %v", err)
		}
		if b, _ := os.ReadFile(p); string(b) != "an old file\n" {
			t.Errorf("the file is now %q", b)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".always.txt.agent-*")); len(left) > 0 {
			t.Errorf("temporary files left: %q", left)
		}
		var got bytes.Buffer
		if _, err := tr.ReadFile(ctx20(t), p, &got); !errors.Is(err, errSumMismatch) || got.Len() != 0 {
			t.Errorf("a read corrupted every time: %v, %d bytes handed on", err, got.Len())
		}
	})
}

// Where the host has no SFTP server the file methods go through the
// shell, said once; a login shell that prints on a non-interactive start
// (which breaks an external sftp-server) is named with OpenSSH's advice.
func TestShellFilesWhereSFTPIsNot(t *testing.T) {
	if _, err := os.Stat("/usr/lib/openssh/sftp-server"); err != nil {
		t.Skip("no OpenSSH sftp-server")
	}
	home := t.TempDir()
	os.Chmod(home, 0o755)
	for _, tc := range []struct {
		name, config, bashrc, want string
	}{
		{"subsystem off", "Subsystem sftp /nonexistent/sftp-server\nSetEnv SHLVL=1 HOME=" + home + "\n", "", "no usable SFTP server"},
		{"noisy bashrc", "Subsystem sftp /usr/lib/openssh/sftp-server\nSetEnv HOME=" + home + "\n", "echo 'Welcome to this host!'\n", "Ensure the remote shell produces no output for non-interactive sessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(filepath.Join(home, ".bashrc"), []byte(tc.bashrc), 0o644)
			d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: tc.config})
			var w warnings
			tr := dial(t, hostConfig(d.Host), Options{Warn: w.warn})
			for i := range 3 {
				p := filepath.Join(home, "f.txt")
				data := []byte(strings.Repeat("x", i*1000) + "\n")
				if _, err := tr.WriteFile(ctx20(t), p, bytes.NewReader(data), 0o600); err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if _, err := tr.ReadFile(ctx20(t), "~/f.txt", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
					t.Fatalf("read back %d bytes, %v", got.Len(), err)
				}
			}
			// A fifo is not opened: the read would wait for a writer.
			if err := syscall.Mkfifo(filepath.Join(home, "fifo"), 0o600); err != nil && !errors.Is(err, os.ErrExist) {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := tr.ReadFile(ctx, "~/fifo", io.Discard); !errors.Is(err, transport.ErrSpecialFile) {
				t.Errorf("read of a fifo: %v, want transport.ErrSpecialFile", err)
			}
			if n := strings.Count(w.String(), "files go through the shell"); n != 1 || !strings.Contains(w.String(), tc.want) {
				t.Errorf("warned %d times, want once saying %q: %s", n, tc.want, w.String())
			}
		})
	}
}
