package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", "'", "''", `a\'b`, "$HOME `id` $(id) \"x\" ; & | * ?", "line1\nline2\n", "tab\there", "é ü 日本"} {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			t.Fatalf("sh -c for %q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("shellQuote(%q) reads back as %q", s, out)
		}
	}
}

func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "it's", "$(id)", "a\nb", `\'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			t.Skip("NUL cannot be in an argument")
		}
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			t.Fatalf("sh -c for %q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("shellQuote(%q) reads back as %q", s, out)
		}
	})
}

// filterChunks writes chunks through a markerFilter and returns what passed
// and what was parsed.
func filterChunks(nonce string, chunks ...string) (out string, pid int, status string) {
	var b bytes.Buffer
	f := &markerFilter{prefix: []byte(nonce + " "), out: &b}
	for _, c := range chunks {
		f.Write([]byte(c))
	}
	f.flush()
	return b.String(), f.pid(), f.status()
}

func TestMarkerFilter(t *testing.T) {
	const n = "0123abcd"
	for _, tc := range []struct {
		name   string
		chunks []string
		out    string
		pid    int
		status string
	}{
		{"marker only", []string{n + " 42 ok\n"}, "", 42, "ok"},
		{"then output", []string{n + " 42 ok\nerr1\n", "err2"}, "err1\nerr2", 42, "ok"},
		{"split marker", []string{n[:3], n[3:] + " 4", "2 ok", "\nx"}, "x", 42, "ok"},
		{"login noise first", []string{"bashrc: noise\n", n + " 7 ok\nreal\n"}, "bashrc: noise\nreal\n", 7, "ok"},
		{"noise without newline", []string{"noise" + n + " 7 ok\nreal"}, "noisereal", 7, "ok"},
		{"cd failure", []string{n + " 9 noent\n"}, "", 9, "noent"},
		{"no marker", []string{"sh: not found\n", "tail"}, "sh: not found\ntail", 0, ""},
		{"marker text later is output", []string{n + " 1 ok\n" + n + " 2 ok\n"}, n + " 2 ok\n", 1, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, pid, status := filterChunks(n, tc.chunks...)
			if out != tc.out || pid != tc.pid || status != tc.status {
				t.Errorf("got %q pid %d status %q; want %q pid %d status %q", out, pid, status, tc.out, tc.pid, tc.status)
			}
		})
	}
}

func TestMarkerFilterBounded(t *testing.T) {
	var b bytes.Buffer
	f := &markerFilter{prefix: []byte("nonce "), out: &b}
	big := bytes.Repeat([]byte("x"), maxPreamble/4)
	for range 5 {
		f.Write(big) // one endless line, no marker
	}
	if len(f.buf) > maxPreamble {
		t.Errorf("holds %d bytes back, want at most %d", len(f.buf), maxPreamble)
	}
	f.flush()
	if b.Len() != 5*len(big) {
		t.Errorf("passed %d bytes, want %d", b.Len(), 5*len(big))
	}
}

func FuzzMarkerFilter(f *testing.F) {
	f.Add("noise\n", "out\nmore", 3)
	f.Add("", "", 0)
	f.Add("no newline", "x\n", 1)
	f.Fuzz(func(t *testing.T, before, after string, split int) {
		const n = "feedface"
		if strings.Contains(before+after, n) {
			t.Skip()
		}
		stream := before + n + " 123 ok\n" + after
		split = max(0, min(split, len(stream)))
		out, pid, status := filterChunks(n, stream[:split], stream[split:])
		if len(before) > maxPreamble {
			return // gave up looking: everything passes
		}
		if out != before+after || pid != 123 || status != "ok" {
			t.Errorf("stream %q split at %d: out %q pid %d status %q", stream, split, out, pid, status)
		}
	})
}

// TestWrapperLocally runs the remote command line the way sshd does (the
// login shell's -c), here with bash and a BASH_ENV that prints noise like a
// chatty .bashrc.
func TestWrapperLocally(t *testing.T) {
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, "sub"), 0o755)
	os.WriteFile(filepath.Join(home, "file"), nil, 0o644)
	rc := filepath.Join(home, ".bashrc")
	os.WriteFile(rc, []byte("echo bashrc-noise >&2\n"), 0o644)
	for _, tc := range []struct {
		dir, wantPwd, wantStatus string
	}{
		{"", home, "ok"},
		{"~", home, "ok"},
		{"~/sub", home + "/sub", "ok"},
		{"sub", home + "/sub", "ok"},
		{home + "/sub", home + "/sub", "ok"},
		{"~/missing", "", "noent"},
		{"~/file", "", "notdir"},
		{"it's missing", "", "noent"},
	} {
		cmd := exec.Command("bash", "-c", remoteCommand("n0nce", "pwd; echo 'quoted $x' >&2", tc.dir, nil))
		cmd.Dir, cmd.Env = home, []string{"HOME=" + home, "BASH_ENV=" + rc, "PATH=/usr/bin:/bin"}
		var stdout, stderr bytes.Buffer
		f := &markerFilter{prefix: []byte("n0nce "), out: &stderr}
		cmd.Stdout, cmd.Stderr = &stdout, f
		cmd.Run()
		f.flush()
		if f.status() != tc.wantStatus || f.pid() <= 1 {
			t.Errorf("dir %q: status %q pid %d, want %q", tc.dir, f.status(), f.pid(), tc.wantStatus)
		}
		if tc.wantStatus != "ok" {
			continue
		}
		if got := strings.TrimSpace(stdout.String()); got != tc.wantPwd {
			t.Errorf("dir %q: pwd %q, want %q", tc.dir, got, tc.wantPwd)
		}
		if got := stderr.String(); got != "bashrc-noise\nquoted $x\n" {
			t.Errorf("dir %q: stderr %q", tc.dir, got)
		}
	}
}

// TestKillLeavesNothingBehind: a command with a background child, killed by
// timeout or cancel, leaves no process on the target (sshd on this machine).
func TestKillLeavesNothingBehind(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(d.Host), Options{})
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			// A unique duration makes the sleeps findable by command line.
			marker := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1e9)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := transport.Command{Command: fmt.Sprintf("sleep %s1 & echo started; sleep %s2; echo never", marker, marker), Dir: "~"}
			if how == "timeout" {
				cmd.Timeout = 700 * time.Millisecond
			} else {
				time.AfterFunc(700*time.Millisecond, cancel)
			}
			start := time.Now()
			res, err := tr.Run(ctx, cmd)
			if how == "timeout" && !errors.Is(err, transport.ErrTimeout) || how == "cancel" && !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			if res.Stdout != "started\n" || res.ExitCode != -1 {
				t.Errorf("partial result %+v", res)
			}
			t.Logf("returned after %v", time.Since(start))
			deadline := time.Now().Add(3 * time.Second)
			for {
				out, _ := exec.Command("pgrep", "-f", marker).Output()
				if len(bytes.TrimSpace(out)) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("processes with %s survive on the target: %s", marker, out)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func TestRunDirErrors(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	os.WriteFile(filepath.Join(srv.Home, "file"), nil, 0o644)
	for dir, want := range map[string]error{"~/missing": fs.ErrNotExist, "file": syscall.ENOTDIR} {
		res, err := tr.Run(context.Background(), transport.Command{Command: "echo ran", Dir: dir})
		if !errors.Is(err, want) || res.Stdout != "" {
			t.Errorf("Dir %q: %+v, %v; want %v and nothing run", dir, res, err, want)
		}
	}
	res, err := tr.Run(context.Background(), transport.Command{Command: "pwd", Dir: "~"})
	if err != nil || strings.TrimSpace(res.Stdout) != srv.Home {
		t.Errorf("Dir ~: %q, %v", res.Stdout, err)
	}
}

// TestSessionCap: more concurrent Runs than sshd's MaxSessions all succeed.
func TestSessionCap(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(d.Host), Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	start := time.Now()
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tr.Run(context.Background(), transport.Command{Command: fmt.Sprintf("sleep 0.2; echo %d", i)})
			if err == nil && res.Stdout != fmt.Sprintf("%d\n", i) {
				err = fmt.Errorf("run %d: %+v", i, res)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("30 runs in %v", time.Since(start))
}
