package become_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/autoshell/agent/transport/become"
)

// recorder is a transport that records every command line and input it
// is given, to prove the password is on neither a command line nor
// anywhere but sudo's standard input.
type recorder struct {
	transport.Transport
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	r.mu.Lock()
	r.lines = append(r.lines, cmd.Command)
	r.mu.Unlock()
	return r.Transport.Run(ctx, cmd)
}

func mustNew(t *testing.T, tr transport.Transport, cfg become.Config) *become.Transport {
	t.Helper()
	b, err := become.New(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runOK(t *testing.T, tr transport.Transport, cmd string) transport.Result {
	t.Helper()
	res, err := tr.Run(context.Background(), transport.Command{Command: cmd, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return res
}

// TestSudoOverSSHD covers both sudoers entries over real sshd: root's
// files changed through sudo keep owner, group and mode; the password
// never reaches a command line or the command; sudo's refusals are
// ErrBecome errors saying why, quickly, not hangs.
func TestSudoOverSSHD(t *testing.T) {
	d, s := testenv.StartSudoSSHD(t)
	dir := rootDir(t)
	target := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(target, []byte("listen 80\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(target, 0, 4); err != nil { // root:adm, as many /etc files
		t.Fatal(err)
	}

	t.Run("NoPasswordWriteKeepsOwnerModeAtomically", func(t *testing.T) {
		login := dialAs(t, d, s.NoPassUser)
		// The login user cannot even read it.
		if _, err := login.ReadFile(context.Background(), target, io.Discard); err == nil {
			t.Fatal("the login user could read a root-only file: the test proves nothing")
		}
		b := mustNew(t, login, become.Config{})
		if got := b.Host().User; got != "root" {
			t.Errorf("Host().User = %q", got)
		}
		if n, err := b.WriteFile(context.Background(), target, strings.NewReader("listen 8080\n"), 0o600); err != nil || n != 12 {
			t.Fatalf("WriteFile = %d, %v", n, err)
		}
		fi, err := os.Stat(target)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != 0o640 || st.Uid != 0 || st.Gid != 4 {
			t.Errorf("after write: mode %v uid %d gid %d, want 0640 0:4", fi.Mode().Perm(), st.Uid, st.Gid)
		}
		var buf bytes.Buffer
		if _, err := b.ReadFile(context.Background(), target, &buf); err != nil || buf.String() != "listen 8080\n" {
			t.Errorf("ReadFile = %q, %v", buf.String(), err)
		}
		// A new file belongs to root with the mode asked for.
		nf := filepath.Join(dir, "new.conf")
		if _, err := b.WriteFile(context.Background(), nf, strings.NewReader("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(nf); err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("new file: %v %v", fi, err)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".agent-tmp") {
				t.Errorf("temporary file left behind: %s", e.Name())
			}
		}
		if res := runOK(t, b, "id -un"); res.Stdout != "root\n" || res.Stderr != "" {
			t.Errorf("id -un = %+v", res)
		}
		// A missing directory of a write is fs.ErrNotExist.
		if _, err := b.WriteFile(context.Background(), filepath.Join(dir, "no/such"), strings.NewReader("x"), 0); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("write into a missing directory: %v", err)
		}
	})

	t.Run("PasswordNeverOnACommandLineNorToTheCommand", func(t *testing.T) {
		// NOPASSWD, yet a password is configured: sudo does not read it,
		// and the command must not get it on its standard input.
		rec := &recorder{Transport: dialAs(t, d, s.NoPassUser)}
		b := mustNew(t, rec, become.Config{Password: "not-read-by-sudo-" + s.Password})
		res := runOK(t, b, "cat; echo done")
		if res.Stdout != "done\n" {
			t.Errorf("the command read %q from its standard input", res.Stdout)
		}
		// With input of its own, it gets exactly that.
		res, err := b.Run(context.Background(), transport.Command{Command: "cat", Stdin: strings.NewReader("own input\n")})
		if err != nil || res.Stdout != "own input\n" {
			t.Errorf("cat with stdin = %q, %v", res.Stdout, err)
		}
		rec2 := &recorder{Transport: dialAs(t, d, s.PassUser)}
		b2 := mustNew(t, rec2, become.Config{Password: s.Password})
		if res := runOK(t, b2, "cat; id -un"); res.Stdout != "root\n" {
			t.Errorf("with a password sudo asks for: %q", res.Stdout)
		}
		if _, err := b2.WriteFile(context.Background(), filepath.Join(dir, "pw.conf"), strings.NewReader("y"), 0); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*recorder{rec, rec2} {
			for _, l := range r.lines {
				if strings.Contains(l, s.Password) {
					t.Errorf("password on a command line: %q", l)
				}
			}
			if len(r.lines) == 0 {
				t.Error("nothing recorded")
			}
		}
	})

	refusals := []struct {
		name, user, password, want string
	}{
		{"WrongPassword", s.PassUser, "wrong-" + s.Password, "the become password is wrong"},
		{"PasswordNeeded", s.PassUser, "", "sudo wants a password"},
		{"RequireTTYWrongPassword", s.TTYPassUser, "wrong-" + s.Password, "the become password is wrong"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			b := mustNew(t, dialAs(t, d, tc.user), become.Config{Password: tc.password})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			err := b.Check(ctx)
			if !errors.Is(err, become.ErrBecome) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want ErrBecome saying %q", err, tc.want)
			}
			if ctx.Err() != nil {
				t.Fatalf("sudo hung until the deadline (%v)", time.Since(start))
			}
			if tc.password != "" && strings.Contains(err.Error(), tc.password) {
				t.Errorf("the error shows the password: %v", err)
			}
			if _, err := b.Run(ctx, transport.Command{Command: "true"}); !errors.Is(err, become.ErrBecome) {
				t.Errorf("Run = %v, want ErrBecome", err)
			}
			var buf bytes.Buffer
			if _, err := b.ReadFile(ctx, target, &buf); !errors.Is(err, become.ErrBecome) {
				t.Errorf("ReadFile = %v, want ErrBecome", err)
			}
		})
	}

	t.Run("RequireTTY", func(t *testing.T) {
		// sudoers says requiretty: sudo refuses without a terminal ("sorry,
		// you must have a tty"); agent runs it again under a pty, with and
		// without a password, and the password is still on sudo's standard
		// input only, the command's streams and status exact.
		marker := fmt.Sprintf("agent-tty-timeout-%d", time.Now().UnixNano())
		for _, c := range []struct{ user, password string }{{s.TTYUser, ""}, {s.TTYPassUser, s.Password}} {
			rec := &recorder{Transport: dialAs(t, d, c.user)}
			b := mustNew(t, rec, become.Config{Password: c.password})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := b.Check(ctx); err != nil {
				t.Fatalf("%s: Check = %v", c.user, err)
			}
			res, err := b.Run(ctx, transport.Command{Command: "id -un; echo oops >&2; exit 3"})
			if err != nil || res.Stdout != "root\n" || res.Stderr != "oops\n" || res.ExitCode != 3 {
				t.Errorf("%s: Run = %+v, %v; want root, oops on stderr, exit 3", c.user, res, err)
			}
			res, err = b.Run(ctx, transport.Command{Command: "cat", Stdin: strings.NewReader("own input\n")})
			if err != nil || res.Stdout != "own input\n" {
				t.Errorf("%s: cat with stdin = %q, %v", c.user, res.Stdout, err)
			}
			if res := runOK(t, b, "cat; echo done"); res.Stdout != "done\n" {
				t.Errorf("%s: the command read %q from its standard input", c.user, res.Stdout)
			}
			p := filepath.Join(dir, "tty-"+c.user+".conf")
			if _, err := b.WriteFile(ctx, p, strings.NewReader("tty\n"), 0o600); err != nil {
				t.Fatalf("%s: WriteFile = %v", c.user, err)
			}
			if fi, err := os.Stat(p); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
				t.Errorf("%s: written file: %v %v", c.user, fi, err)
			}
			var buf bytes.Buffer
			if _, err := b.ReadFile(ctx, p, &buf); err != nil || buf.String() != "tty\n" {
				t.Errorf("%s: ReadFile = %q, %v", c.user, buf.String(), err)
			}
			// A timeout kills the command under the pty too.
			start := time.Now()
			if _, err := b.Run(ctx, transport.Command{Command: "sleep 300; : " + marker, Timeout: 2 * time.Second}); !errors.Is(err, transport.ErrTimeout) {
				t.Errorf("%s: sleep with timeout = %v", c.user, err)
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("%s: the timeout took %v", c.user, el)
			}
			pty := false
			for _, l := range rec.lines {
				pty = pty || strings.Contains(l, "script -qec")
				if c.password != "" && strings.Contains(l, c.password) {
					t.Errorf("%s: password on a command line: %q", c.user, l)
				}
			}
			if !pty {
				t.Errorf("%s: no command ran under a pty", c.user)
			}
		}
		// The sleeps are gone.
		if out, _ := exec.Command("pgrep", "-f", marker).Output(); len(out) != 0 {
			t.Errorf("a timed-out command is still running: pids %s", out)
		}
	})

	t.Run("OtherBecomeUser", func(t *testing.T) {
		// Become a user who is not root: the command and the files are
		// that user's.
		b := mustNew(t, dialAs(t, d, s.NoPassUser), become.Config{User: s.TTYUser})
		if res := runOK(t, b, "id -un"); res.Stdout != s.TTYUser+"\n" {
			t.Errorf("id -un = %q", res.Stdout)
		}
		home, err := b.HomeDir(context.Background())
		if err != nil || home != "/home/"+s.TTYUser {
			t.Errorf("HomeDir = %q, %v", home, err)
		}
		p := fmt.Sprintf("~/.agent-become-%d", time.Now().UnixNano())
		if _, err := b.WriteFile(context.Background(), p, strings.NewReader("z"), 0o600); err != nil {
			t.Fatalf("write as %s (needs setfacl): %v", s.TTYUser, err)
		}
		defer runOK(t, b, "rm -f "+p)
		if res := runOK(t, b, "stat -c %U "+p); res.Stdout != s.TTYUser+"\n" {
			t.Errorf("owner = %q", res.Stdout)
		}
	})
}
