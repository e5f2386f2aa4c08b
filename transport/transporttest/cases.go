package transporttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/transport"
)

func run(t *testing.T, tr transport.Transport, cmd string) transport.Result {
	t.Helper()
	res, err := tr.Run(context.Background(), transport.Command{Command: cmd, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return res
}

func write(t *testing.T, tr transport.Transport, p string, data []byte, perm fs.FileMode) {
	t.Helper()
	n, err := tr.WriteFile(context.Background(), p, bytes.NewReader(data), perm)
	if err != nil {
		t.Fatalf("WriteFile(%s): %v", p, err)
	}
	if n != int64(len(data)) {
		t.Fatalf("WriteFile(%s) = %d bytes, want %d", p, n, len(data))
	}
}

func read(t *testing.T, tr transport.Transport, p string) []byte {
	t.Helper()
	var b bytes.Buffer
	n, err := tr.ReadFile(context.Background(), p, &b)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", p, err)
	}
	if n != int64(b.Len()) {
		t.Fatalf("ReadFile(%s) reported %d bytes, wrote %d", p, n, b.Len())
	}
	return b.Bytes()
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// sleeper makes a uniquely named link to sleep(1) in the fixture's directory
// and returns its path: a process started through it shows the name in its
// command line, whatever shell execs it.
func sleeper(t *testing.T, f Fixture) string {
	t.Helper()
	p := path.Join(f.Dir, fmt.Sprintf("agentsleep%x", randomBytes(t, 6)))
	if res := run(t, f.Transport, `ln -s "$(command -v sleep)" `+p); res.ExitCode != 0 {
		t.Fatalf("ln: %s", res.Stderr)
	}
	return p
}

// alive reports whether a process whose command line contains marker is
// running. Every host in the suite is this machine (local, or sshd and the
// in-process server on loopback), so the check runs locally.
func alive(t *testing.T, marker string) bool {
	t.Helper()
	out, err := exec.Command("pgrep", "-f", marker).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return false
		}
		t.Fatalf("pgrep: %v", err)
	}
	return len(bytes.TrimSpace(out)) > 0
}

func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(t, marker) {
		if time.Now().After(deadline) {
			t.Fatalf("a process with %q is still running on the host", marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func init() {
	add("ExitCodes", func(t *testing.T, f Fixture) {
		for _, tc := range []struct {
			cmd  string
			want int
		}{{"true", 0}, {"false", 1}, {"exit 3", 3}, {"exit 255", 255}, {"nosuchcommand-agent 2>/dev/null", 127}} {
			if got := run(t, f.Transport, tc.cmd).ExitCode; got != tc.want {
				t.Errorf("%q: exit %d, want %d", tc.cmd, got, tc.want)
			}
		}
		if res := run(t, f.Transport, "kill -9 $$"); res.ExitCode != 128+9 {
			t.Errorf("shell killed by KILL: exit %d, want 137", res.ExitCode)
		}
		if res := run(t, f.Transport, "sleep 10 & kill -TERM $!; wait $!"); res.ExitCode != 128+15 {
			t.Errorf("wait on a child killed by TERM: exit %d, want 143", res.ExitCode)
		}
	})

	add("StdoutStderrSeparate", func(t *testing.T, f Fixture) {
		res := run(t, f.Transport, "echo out; echo err >&2; printf 'no newline'")
		if res.Stdout != "out\nno newline" {
			t.Errorf("stdout = %q", res.Stdout)
		}
		if res.Stderr != "err\n" {
			t.Errorf("stderr = %q", res.Stderr)
		}
		if res.StdoutBytes != int64(len(res.Stdout)) || res.StderrBytes != 4 {
			t.Errorf("byte counts %d/%d", res.StdoutBytes, res.StderrBytes)
		}
		if res.Duration <= 0 {
			t.Errorf("duration %v", res.Duration)
		}
	})

	add("StdinAndDir", func(t *testing.T, f Fixture) {
		res, err := f.Transport.Run(context.Background(), transport.Command{
			Command: "pwd; cat", Dir: f.Dir, Stdin: strings.NewReader("from stdin\n"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := f.Dir + "\nfrom stdin\n"; res.Stdout != want {
			t.Errorf("stdout = %q, want %q", res.Stdout, want)
		}
		if _, err := f.Transport.Run(context.Background(), transport.Command{Command: "true", Dir: path.Join(f.Dir, "missing")}); err == nil {
			t.Errorf("Run in a missing directory: no error")
		}
	})

	add("StreamsInFull", func(t *testing.T, f Fixture) {
		// The capture is bounded; the Stdout/Stderr writers get everything.
		var out, errs bytes.Buffer
		res, err := f.Transport.Run(context.Background(), transport.Command{
			Command: "seq 1 20000; seq 1 3000 >&2", CaptureLimit: 100, Stdout: &out, Stderr: &errs,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := func(n int) string {
			var b strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&b, "%d\n", i)
			}
			return b.String()
		}
		if out.String() != want(20000) || errs.String() != want(3000) {
			t.Errorf("streamed %d/%d bytes, want %d/%d", out.Len(), errs.Len(), len(want(20000)), len(want(3000)))
		}
		if len(res.Stdout) > 300 || res.StdoutBytes != int64(out.Len()) {
			t.Errorf("capture not bounded: %d bytes kept of %d", len(res.Stdout), res.StdoutBytes)
		}
	})

	add("LargeOutputBounded", func(t *testing.T, f Fixture) {
		// 64 MiB of output, captured with 1 KiB head and tail.
		res, err := f.Transport.Run(context.Background(), transport.Command{
			Command:      "echo BEGIN; head -c 67108864 /dev/zero | tr '\\0' x; echo; echo END; echo ERR >&2",
			CaptureLimit: 1024, Timeout: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(len("BEGIN\n") + 64<<20 + len("\nEND\n"))
		if res.StdoutBytes != want {
			t.Errorf("StdoutBytes = %d, want %d", res.StdoutBytes, want)
		}
		if len(res.Stdout) > 2*1024+100 {
			t.Errorf("captured %d bytes, want about 2 KiB", len(res.Stdout))
		}
		if !strings.HasPrefix(res.Stdout, "BEGIN\nxxx") || !strings.HasSuffix(res.Stdout, "xxx\nEND\n") {
			t.Errorf("head/tail lost: %q … %q", res.Stdout[:20], res.Stdout[len(res.Stdout)-20:])
		}
		if !strings.Contains(res.Stdout, fmt.Sprintf("[output truncated: %d bytes omitted]", want-2048)) {
			t.Errorf("no truncation marker in %q", res.Stdout[1000:1100])
		}
		if res.Stderr != "ERR\n" {
			t.Errorf("stderr = %q", res.Stderr)
		}
	})

	add("BinarySafeFiles", func(t *testing.T, f Fixture) {
		data := randomBytes(t, 3<<20+17)
		data[0], data[1], data[2] = 0, '\r', '\n'
		p := path.Join(f.Dir, "blob.bin")
		write(t, f.Transport, p, data, 0o600)
		if got := read(t, f.Transport, p); !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes, differ from the %d written", len(got), len(data))
		}
		sum := fmt.Sprintf("%x", sha256.Sum256(data))
		if out := run(t, f.Transport, "sha256sum "+p).Stdout; !strings.HasPrefix(out, sum) {
			t.Errorf("sha256sum on host = %q, want %s", out, sum)
		}
		write(t, f.Transport, path.Join(f.Dir, "empty"), nil, 0)
		if got := read(t, f.Transport, path.Join(f.Dir, "empty")); len(got) != 0 {
			t.Errorf("empty file read back as %d bytes", len(got))
		}
	})

	add("WriteReplacesAndKeepsMode", func(t *testing.T, f Fixture) {
		p := path.Join(f.Dir, "script.sh")
		write(t, f.Transport, p, []byte("#!/bin/sh\necho 1\n"), 0o750)
		fi, err := f.Transport.Stat(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o750 || fi.Size() != 17 || fi.IsDir() {
			t.Fatalf("new file: mode %v size %d", fi.Mode(), fi.Size())
		}
		run(t, f.Transport, "chmod 0701 "+p)
		write(t, f.Transport, p, []byte("#!/bin/sh\necho 2\n"), 0o600)
		if fi, _ = f.Transport.Stat(context.Background(), p); fi.Mode().Perm() != 0o701 {
			t.Errorf("mode after replace = %v, want 0701 kept", fi.Mode().Perm())
		}
		if out := run(t, f.Transport, p).Stdout; out != "2\n" {
			t.Errorf("script prints %q", out)
		}
		write(t, f.Transport, path.Join(f.Dir, "default"), []byte("x"), 0)
		if fi, _ = f.Transport.Stat(context.Background(), path.Join(f.Dir, "default")); fi.Mode().Perm() != 0o644 {
			t.Errorf("default mode = %v, want 0644", fi.Mode().Perm())
		}
		if out := run(t, f.Transport, "ls -A "+f.Dir).Stdout; out != "default\nscript.sh\n" {
			t.Errorf("directory holds %q: temporary files left behind?", out)
		}
	})

	add("WriteThroughSymlinkKeepsLinkAndOwner", func(t *testing.T, f Fixture) {
		target, link := path.Join(f.Dir, "real.conf"), path.Join(f.Dir, "link.conf")
		run(t, f.Transport, "echo old > "+target+" && ln -s real.conf "+link)
		if f.Root {
			run(t, f.Transport, "chown 1234:1234 "+target)
		}
		run(t, f.Transport, "chmod 4751 "+target) // after chown, which clears setuid
		write(t, f.Transport, link, []byte("new\n"), 0o600)
		if got := string(read(t, f.Transport, target)); got != "new\n" {
			t.Errorf("link target holds %q", got)
		}
		var want string
		if f.Root {
			want = "link real.conf 1234:1234 4751\n"
		} else {
			want = "link real.conf 4751\n"
		}
		cmd := `[ -L ` + link + ` ] && printf 'link %s' "$(readlink ` + link + `)"; `
		if f.Root {
			cmd += `printf ' %s' "$(stat -c %u:%g ` + target + `)"; `
		}
		cmd += `printf ' %s\n' "$(stat -c %a ` + target + `)"`
		if got := run(t, f.Transport, cmd).Stdout; got != want {
			t.Errorf("after writing through the link: %q, want %q", got, want)
		}
	})

	add("HomeExpansion", func(t *testing.T, f Fixture) {
		name := path.Base(f.Dir)
		rel := "~/" + name + "-home-test"
		write(t, f.Transport, rel, []byte("at home"), 0)
		defer run(t, f.Transport, "rm -f ~/"+name+"-home-test")
		abs := path.Join(f.Home, name+"-home-test")
		if got := string(read(t, f.Transport, abs)); got != "at home" {
			t.Errorf("~/ wrote elsewhere: %s holds %q", abs, got)
		}
		if fi, err := f.Transport.Stat(context.Background(), "~"); err != nil || !fi.IsDir() {
			t.Errorf("Stat(~) = %v, %v", fi, err)
		}
		res, err := f.Transport.Run(context.Background(), transport.Command{Command: "pwd", Dir: "~"})
		if err != nil || strings.TrimSpace(res.Stdout) != f.Home {
			t.Errorf("Run in ~: %q, %v; want %s", res.Stdout, err, f.Home)
		}
	})

	add("MissingFile", func(t *testing.T, f Fixture) {
		p := path.Join(f.Dir, "nope")
		if _, err := f.Transport.ReadFile(context.Background(), p, io.Discard); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p) {
			t.Errorf("ReadFile missing: %v", err)
		}
		if _, err := f.Transport.Stat(context.Background(), p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat missing: %v", err)
		}
		if _, err := f.Transport.WriteFile(context.Background(), path.Join(p, "child"), strings.NewReader("x"), 0); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("WriteFile into missing dir: %v", err)
		}
		if _, err := f.Transport.ReadFile(context.Background(), f.Dir, io.Discard); !errors.Is(err, syscall.EISDIR) {
			t.Errorf("ReadFile of a directory: %v, want EISDIR", err)
		}
	})

	add("PermissionDenied", func(t *testing.T, f Fixture) {
		p := path.Join(f.Dir, "locked", "file")
		run(t, f.Transport, "mkdir "+path.Dir(p)+" && echo old > "+p)
		lock, unlock := "chmod 0555 "+path.Dir(p)+" && chmod 0 "+p, "chmod 0755 "+path.Dir(p)+"; chmod 0644 "+p
		if f.Root { // root ignores mode bits; an immutable directory still refuses
			lock, unlock = "chattr +i "+path.Dir(p), "chattr -i "+path.Dir(p)
		}
		if res := run(t, f.Transport, lock); res.ExitCode != 0 {
			t.Skipf("cannot lock a directory here: %s", res.Stderr)
		}
		defer run(t, f.Transport, unlock)
		_, err := f.Transport.WriteFile(context.Background(), p, strings.NewReader("new"), 0)
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("WriteFile into a locked directory: %v, want permission denied", err)
		}
		if !f.Root {
			if _, err := f.Transport.ReadFile(context.Background(), p, io.Discard); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("ReadFile of a mode-0 file: %v, want permission denied", err)
			}
		}
		run(t, f.Transport, unlock)
		if got := string(read(t, f.Transport, p)); got != "old\n" {
			t.Errorf("file changed to %q", got)
		}
	})

	add("TimeoutKillsProcessGroup", func(t *testing.T, f Fixture) {
		m := sleeper(t, f)
		start := time.Now()
		res, err := f.Transport.Run(context.Background(), transport.Command{
			Command: fmt.Sprintf("echo started; %s 1000 & sh -c '%s 1001'; echo never", m, m),
			Timeout: 500 * time.Millisecond,
		})
		if !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("returned after %v", d)
		}
		if res.Stdout != "started\n" {
			t.Errorf("partial stdout = %q", res.Stdout)
		}
		if res.ExitCode != -1 {
			t.Errorf("exit code after a timeout = %d, want -1 (unknown)", res.ExitCode)
		}
		waitGone(t, m)
	})

	add("TimeoutWithStdinKillsProcessGroup", func(t *testing.T, f Fixture) {
		// A command with stdin takes the SSH session path (not the worker).
		m := sleeper(t, f)
		_, err := f.Transport.Run(context.Background(), transport.Command{
			Command: fmt.Sprintf("cat >/dev/null; %s 1000 & %s 1001", m, m),
			Stdin:   strings.NewReader("input\n"), Timeout: 500 * time.Millisecond,
		})
		if !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		waitGone(t, m)
	})

	add("CancelKillsProcessGroup", func(t *testing.T, f Fixture) {
		m := sleeper(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		res, err := f.Transport.Run(ctx, transport.Command{Command: "sh -c '" + m + " 1002; true'"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res.ExitCode != -1 {
			t.Errorf("exit code after cancel = %d, want -1 (unknown)", res.ExitCode)
		}
		waitGone(t, m)
		if res := run(t, f.Transport, "echo still usable"); res.Stdout != "still usable\n" {
			t.Errorf("after cancel: %q", res.Stdout)
		}
	})

	add("Concurrent", func(t *testing.T, f Fixture) {
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 20 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				res, err := f.Transport.Run(context.Background(), transport.Command{Command: fmt.Sprintf("sleep 0.1; echo %d", i)})
				if err == nil && res.Stdout != fmt.Sprintf("%d\n", i) {
					err = fmt.Errorf("run %d printed %q", i, res.Stdout)
				}
				errs <- err
			}()
			go func() {
				defer wg.Done()
				p := path.Join(f.Dir, fmt.Sprintf("f%d", i))
				data := []byte(strings.Repeat(fmt.Sprint(i), 1000))
				_, err := f.Transport.WriteFile(context.Background(), p, bytes.NewReader(data), 0)
				var b bytes.Buffer
				if err == nil {
					_, err = f.Transport.ReadFile(context.Background(), p, &b)
				}
				if err == nil && !bytes.Equal(b.Bytes(), data) {
					err = fmt.Errorf("file %d corrupted", i)
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
	})

	add("AtomicWriteUnderCutConnection", func(t *testing.T, f Fixture) {
		if f.CutAfter == nil {
			t.Skip("transport has no connection to cut")
		}
		p := path.Join(f.Dir, "config")
		old := []byte("old content\n")
		write(t, f.Transport, p, old, 0o640)
		for _, cut := range []int64{1, 4 << 10, 1 << 20} {
			tr := f.CutAfter(t, cut)
			_, err := tr.WriteFile(context.Background(), p, bytes.NewReader(randomBytes(t, 4<<20)), 0)
			tr.Close()
			if err == nil {
				t.Fatalf("cut after %d bytes: WriteFile succeeded", cut)
			}
			if got := read(t, f.Transport, p); !bytes.Equal(got, old) {
				t.Fatalf("cut after %d bytes: file now holds %d bytes, want the old content", cut, len(got))
			}
			if fi, _ := f.Transport.Stat(context.Background(), p); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode changed to %v", fi.Mode().Perm())
			}
		}
	})

	add("ClosedTransport", func(t *testing.T, f Fixture) {
		if err := f.Transport.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := f.Transport.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := f.Transport.Run(context.Background(), transport.Command{Command: "true"}); !errors.Is(err, transport.ErrClosed) {
			t.Errorf("Run after Close: %v", err)
		}
		if _, err := f.Transport.Stat(context.Background(), f.Dir); !errors.Is(err, transport.ErrClosed) {
			t.Errorf("Stat after Close: %v", err)
		}
		if h := f.Transport.Host(); h.Kind == "" || h.Name == "" {
			t.Errorf("Host() = %+v", h)
		}
	})
}

func init() {
	add("WrapRunsTheShellUnderAnArgv", func(t *testing.T, f Fixture) {
		// Each wrapper argument arrives as one word, quotes and spaces kept;
		// Dir and stdin still apply.
		res, err := f.Transport.Run(context.Background(), transport.Command{
			Command: `printf '%s|%s|' "$AGENT_WRAPPED" "$(pwd)"; cat`,
			Wrap:    []string{"env", "AGENT_WRAPPED=it's a \"b\" $HOME"},
			Dir:     f.Dir, Stdin: strings.NewReader("in"), Timeout: 30 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := `it's a "b" $HOME|` + f.Dir + "|in"; res.Stdout != want || res.ExitCode != 0 {
			t.Errorf("wrapped with stdin: %q (exit %d, stderr %q), want %q", res.Stdout, res.ExitCode, res.Stderr, want)
		}
		res = run(t, f.Transport, "true") // warm the worker path, if any
		res, err = f.Transport.Run(context.Background(), transport.Command{
			Command: `echo "$AGENT_WRAPPED"; exit 3`, Wrap: []string{"env", "AGENT_WRAPPED=x y"}, Timeout: 30 * time.Second,
		})
		if err != nil || res.Stdout != "x y\n" || res.ExitCode != 3 {
			t.Errorf("wrapped: %q exit %d err %v", res.Stdout, res.ExitCode, err)
		}
	})

	add("WrapTimeoutKillsProcessGroup", func(t *testing.T, f Fixture) {
		m := sleeper(t, f)
		_, err := f.Transport.Run(context.Background(), transport.Command{
			Command: fmt.Sprintf("%s 1000 & %s 1001", m, m), Wrap: []string{"env"},
			Timeout: 500 * time.Millisecond,
		})
		if !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		waitGone(t, m)
	})
}

func init() {
	add("CommandTextArrivesExactly", func(t *testing.T, f Fixture) {
		// The command, its directory and its wrapper's arguments reach the
		// host's shell byte for byte: newlines, tabs, runs of spaces,
		// quotes, backslashes, leading and trailing blanks, and names the
		// worker uses itself; a long multi-line script too.
		odd := "a  b\tc\nd'e\"f\\g $agent_nl `x` \r\n\n end \t"
		quoted := "'" + strings.ReplaceAll(odd, "'", `'\''`) + "'"
		dir := path.Join(f.Dir, "d  ir\nwith 'odd' \t")
		if res := run(t, f.Transport, "mkdir -- "+"'"+strings.ReplaceAll(dir, "'", `'\''`)+"'"); res.ExitCode != 0 {
			t.Fatalf("mkdir: %s", res.Stderr)
		}
		long := strings.Repeat("# a comment line to make the script long\n", 200) + "echo long"
		for _, tc := range []struct {
			name string
			c    transport.Command
			want string
		}{
			{"odd text", transport.Command{Command: "  printf '%s|' " + quoted + "  \t"}, odd + "|"},
			{"multi-line", transport.Command{Command: "echo one\n\n  echo two\t\necho \"$#\""}, "one\ntwo\n0\n"},
			{"dir", transport.Command{Command: `printf '%s' "$(pwd)"`, Dir: dir}, dir},
			{"wrap", transport.Command{Command: `printf '%s' "$AGENT_WRAPPED"`, Wrap: []string{"env", "AGENT_WRAPPED=" + odd}}, odd},
			{"long", transport.Command{Command: long}, "long\n"},
			{"after long", transport.Command{Command: "echo short"}, "short\n"},
		} {
			tc.c.Timeout = 30 * time.Second
			res, err := f.Transport.Run(context.Background(), tc.c)
			if err != nil || res.ExitCode != 0 || res.Stdout != tc.want {
				t.Errorf("%s: %q (exit %d, stderr %q, err %v), want %q", tc.name, res.Stdout, res.ExitCode, res.Stderr, err, tc.want)
			}
		}
	})
}

func init() {
	add("SignalsAsInherited", func(t *testing.T, f Fixture) {
		// A command's shell starts with no signal ignored that the host's
		// sshd would not ignore: a pipeline's writer dies of SIGPIPE
		// quietly, as under `ssh host CMD`.
		res := run(t, f.Transport, "yes | head -n 1")
		if res.Stdout != "y\n" || res.Stderr != "" || res.ExitCode != 0 {
			t.Errorf("yes | head: %q, stderr %q, exit %d", res.Stdout, res.Stderr, res.ExitCode)
		}
	})
}
